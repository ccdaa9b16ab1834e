package sqs

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/sink"
)

const (
	testKeyID  = "AKIAEXAMPLEKEYID0001"
	testSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

func TestParse(t *testing.T) {
	const queue = "https://sqs.us-east-1.amazonaws.com/123456789012/orders"
	creds := `"access_key_id":"` + testKeyID + `","secret_access_key":"` + testSecret + `"`

	tests := []struct {
		name         string
		allowPrivate bool
		raw          string
		wantField    string // "" means success
		wantMessage  string // a fragment of the FieldError
		wantPublic   string
		wantDest     string
	}{
		{name: "minimal",
			raw:        `{"type":"sqs","queue_url":"` + queue + `","region":"us-east-1",` + creds + `}`,
			wantPublic: `{"queue_url":"` + queue + `","region":"us-east-1"}`, wantDest: queue},
		{name: "fifo with endpoint",
			raw:        `{"type":"sqs","queue_url":"https://sqs.eu-west-1.amazonaws.com/1/jobs.fifo","region":"eu-west-1","endpoint":"https://sqs.example.com",` + creds + `}`,
			wantPublic: `{"queue_url":"https://sqs.eu-west-1.amazonaws.com/1/jobs.fifo","region":"eu-west-1","endpoint":"https://sqs.example.com"}`,
			wantDest:   "https://sqs.eu-west-1.amazonaws.com/1/jobs.fifo"},
		{name: "null endpoint is no endpoint",
			raw:        `{"type":"sqs","queue_url":"` + queue + `","region":"us-east-1","endpoint":null,` + creds + `}`,
			wantPublic: `{"queue_url":"` + queue + `","region":"us-east-1"}`, wantDest: queue},
		{name: "loopback endpoint when private sinks are allowed", allowPrivate: true,
			raw:        `{"type":"sqs","queue_url":"http://127.0.0.1:4100/100010001000/q","region":"us-east-1","endpoint":"http://127.0.0.1:4100",` + creds + `}`,
			wantPublic: `{"queue_url":"http://127.0.0.1:4100/100010001000/q","region":"us-east-1","endpoint":"http://127.0.0.1:4100"}`,
			wantDest:   "http://127.0.0.1:4100/100010001000/q"},

		{name: "not an object", raw: `[]`, wantField: "sink", wantMessage: "JSON object"},
		{name: "wrong type", raw: `{"type":"webhook","queue_url":"` + queue + `","region":"us-east-1",` + creds + `}`,
			wantField: "sink.type", wantMessage: `"sqs"`},
		{name: "unknown field", raw: `{"type":"sqs","queue_url":"` + queue + `","region":"us-east-1","session_token":"x",` + creds + `}`,
			wantField: "sink.session_token", wantMessage: "unknown field"},
		{name: "missing queue_url", raw: `{"type":"sqs","region":"us-east-1",` + creds + `}`,
			wantField: "sink.queue_url", wantMessage: "is required"},
		{name: "missing region", raw: `{"type":"sqs","queue_url":"` + queue + `",` + creds + `}`,
			wantField: "sink.region", wantMessage: "is required"},
		{name: "missing access key id", raw: `{"type":"sqs","queue_url":"` + queue + `","region":"us-east-1","secret_access_key":"s"}`,
			wantField: "sink.access_key_id", wantMessage: "is required"},
		{name: "empty secret", raw: `{"type":"sqs","queue_url":"` + queue + `","region":"us-east-1","access_key_id":"k","secret_access_key":""}`,
			wantField: "sink.secret_access_key", wantMessage: "is required"},
		{name: "secret not a string", raw: `{"type":"sqs","queue_url":"` + queue + `","region":"us-east-1","access_key_id":"k","secret_access_key":42}`,
			wantField: "sink.secret_access_key", wantMessage: "must be a string"},
		{name: "secret with a space", raw: `{"type":"sqs","queue_url":"` + queue + `","region":"us-east-1","access_key_id":"k","secret_access_key":"a b"}`,
			wantField: "sink.secret_access_key", wantMessage: "printable ASCII"},
		{name: "queue_url not a URL", raw: `{"type":"sqs","queue_url":"orders","region":"us-east-1",` + creds + `}`,
			wantField: "sink.queue_url", wantMessage: "absolute URL"},
		{name: "queue_url wrong scheme", raw: `{"type":"sqs","queue_url":"sqs://x/1/orders","region":"us-east-1",` + creds + `}`,
			wantField: "sink.queue_url", wantMessage: "scheme"},
		{name: "queue_url with credentials", raw: `{"type":"sqs","queue_url":"https://u:p@sqs.us-east-1.amazonaws.com/1/q","region":"us-east-1",` + creds + `}`,
			wantField: "sink.queue_url", wantMessage: "user information"},
		{name: "queue_url without a queue name", raw: `{"type":"sqs","queue_url":"https://sqs.us-east-1.amazonaws.com/","region":"us-east-1",` + creds + `}`,
			wantField: "sink.queue_url", wantMessage: "must end with the queue name"},
		{name: "queue_url with a bad queue name", raw: `{"type":"sqs","queue_url":"https://sqs.us-east-1.amazonaws.com/1/or$ders","region":"us-east-1",` + creds + `}`,
			wantField: "sink.queue_url", wantMessage: "letters, digits"},
		{name: "queue_url with a query", raw: `{"type":"sqs","queue_url":"` + queue + `?a=b","region":"us-east-1",` + creds + `}`,
			wantField: "sink.queue_url", wantMessage: "query"},
		{name: "region with a dot", raw: `{"type":"sqs","queue_url":"` + queue + `","region":"us-east-1.evil.com",` + creds + `}`,
			wantField: "sink.region", wantMessage: "AWS region"},
		{name: "endpoint not http", raw: `{"type":"sqs","queue_url":"` + queue + `","region":"us-east-1","endpoint":"ftp://x",` + creds + `}`,
			wantField: "sink.endpoint", wantMessage: "scheme"},
		{name: "private endpoint refused", raw: `{"type":"sqs","queue_url":"` + queue + `","region":"us-east-1","endpoint":"http://169.254.169.254",` + creds + `}`,
			wantField: "sink.endpoint", wantMessage: "refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			typ := NewType(Options{AllowPrivate: tc.allowPrivate})
			cfg, err := typ.Parse(json.RawMessage(tc.raw))
			if tc.wantField != "" {
				fieldErr, ok := errors.AsType[*sink.FieldError](err)
				if !ok {
					t.Fatalf("Parse = %+v, %v; want a *FieldError on %s", cfg, err, tc.wantField)
				}
				if fieldErr.Field != tc.wantField || !strings.Contains(fieldErr.Message, tc.wantMessage) {
					t.Fatalf("Parse error = %q, want field %s mentioning %q", fieldErr, tc.wantField, tc.wantMessage)
				}
				if strings.Contains(fieldErr.Error(), testSecret) || strings.Contains(fieldErr.Error(), testKeyID) {
					t.Fatalf("Parse error %q quotes a credential", fieldErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if string(cfg.Public) != tc.wantPublic {
				t.Errorf("Public = %s, want %s", cfg.Public, tc.wantPublic)
			}
			if cfg.Destination != tc.wantDest {
				t.Errorf("Destination = %q, want %q", cfg.Destination, tc.wantDest)
			}
			for _, where := range []string{string(cfg.Public), cfg.Destination} {
				if strings.Contains(where, testSecret) || strings.Contains(where, testKeyID) {
					t.Errorf("a credential leaked into %q", where)
				}
			}
			var cred credentialConfig
			if err := json.Unmarshal(cfg.Credentials, &cred); err != nil {
				t.Fatalf("Credentials %s: %v", cfg.Credentials, err)
			}
			if cred != (credentialConfig{AccessKeyID: testKeyID, SecretAccessKey: testSecret}) {
				t.Errorf("Credentials = %+v, want both keys", cred)
			}
		})
	}
}

func TestOpenRejectsBrokenStoredConfig(t *testing.T) {
	typ := NewType(Options{})
	good := sink.Config{
		Public:      json.RawMessage(`{"queue_url":"https://sqs.us-east-1.amazonaws.com/1/q","region":"us-east-1"}`),
		Credentials: json.RawMessage(`{"access_key_id":"k","secret_access_key":"s"}`),
	}
	if _, err := typ.Open(good, nil); err != nil {
		t.Fatalf("Open(good) = %v", err)
	}
	tests := []struct {
		name string
		cfg  sink.Config
		want string
	}{
		{"public not JSON", sink.Config{Public: json.RawMessage(`x`), Credentials: good.Credentials}, "stored configuration"},
		{"credentials not JSON", sink.Config{Public: good.Public, Credentials: json.RawMessage(`{"secret_access_key":"s3cr`)}, "stored credentials are not"},
		{"credentials missing", sink.Config{Public: good.Public}, "stored credentials are not"},
		{"secret empty", sink.Config{Public: good.Public, Credentials: json.RawMessage(`{"access_key_id":"k"}`)}, "lack"},
		{"region empty", sink.Config{Public: json.RawMessage(`{"queue_url":"https://sqs.us-east-1.amazonaws.com/1/q"}`), Credentials: good.Credentials}, "region"},
		{"queue_url bad", sink.Config{Public: json.RawMessage(`{"queue_url":"q","region":"us-east-1"}`), Credentials: good.Credentials}, "queue_url"},
		{"private endpoint", sink.Config{Public: json.RawMessage(`{"queue_url":"https://sqs.us-east-1.amazonaws.com/1/q","region":"us-east-1","endpoint":"http://10.0.0.1"}`), Credentials: good.Credentials}, "endpoint"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := typ.Open(tc.cfg, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v, %v; want an error mentioning %q", s, err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cr") {
				t.Fatalf("Open error %q quotes the secret", err)
			}
		})
	}
}

func TestIsFIFO(t *testing.T) {
	tests := map[string]bool{
		"https://sqs.us-east-1.amazonaws.com/1/jobs.fifo": true,
		"https://sqs.us-east-1.amazonaws.com/1/jobs":      false,
		"https://sqs.us-east-1.amazonaws.com/1/fifo":      false,
		"https://fifo.example.com.fifo/1/jobs":            false,
	}
	for queueURL, want := range tests {
		if got := isFIFO(queueURL); got != want {
			t.Errorf("isFIFO(%q) = %v, want %v", queueURL, got, want)
		}
	}
}
