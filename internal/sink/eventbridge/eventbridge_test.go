package eventbridge

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/sink"
)

const (
	testKeyID  = "AKIAEXAMPLEKEY123456"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

// sinkObject renders a sink object with the test credentials plus extra
// fields (a nil value drops a field).
func sinkObject(extra map[string]any) string {
	obj := map[string]any{
		"type":              "eventbridge",
		"event_bus":         "orders",
		"region":            "us-east-1",
		"access_key_id":     testKeyID,
		"secret_access_key": testSecret,
	}
	for k, v := range extra {
		if v == nil {
			delete(obj, k)
		} else {
			obj[k] = v
		}
	}
	raw, _ := json.Marshal(obj)
	return string(raw)
}

func TestParse(t *testing.T) {
	tests := []struct {
		name         string
		raw          string
		allowPrivate bool
		wantPublic   string // on success
		wantDest     string // on success
		wantField    string // on failure
		wantMessage  string // a fragment of the failure
	}{
		{name: "minimal", raw: sinkObject(nil),
			wantPublic: `{"event_bus":"orders","region":"us-east-1"}`, wantDest: "us-east-1/orders"},
		{name: "all fields", raw: sinkObject(map[string]any{"endpoint": "https://events.example.com", "detail_type": "Ledger Event"}),
			wantPublic: `{"event_bus":"orders","region":"us-east-1","endpoint":"https://events.example.com","detail_type":"Ledger Event"}`,
			wantDest:   "us-east-1/orders"},
		{name: "bus ARN in the sink's region", raw: sinkObject(map[string]any{"event_bus": "arn:aws:events:eu-west-1:123456789012:event-bus/orders", "region": "eu-west-1"}),
			wantPublic: `{"event_bus":"arn:aws:events:eu-west-1:123456789012:event-bus/orders","region":"eu-west-1"}`,
			wantDest:   "eu-west-1/arn:aws:events:eu-west-1:123456789012:event-bus/orders"},
		{name: "partner bus name", raw: sinkObject(map[string]any{"event_bus": "aws.partner/acme.com/123/orders"}),
			wantPublic: `{"event_bus":"aws.partner/acme.com/123/orders","region":"us-east-1"}`, wantDest: "us-east-1/aws.partner/acme.com/123/orders"},
		{name: "private endpoint literal allowed in dev", raw: sinkObject(map[string]any{"endpoint": "http://127.0.0.1:4566"}), allowPrivate: true,
			wantPublic: `{"event_bus":"orders","region":"us-east-1","endpoint":"http://127.0.0.1:4566"}`, wantDest: "us-east-1/orders"},
		{name: "endpoint hostnames are judged at dial time", raw: sinkObject(map[string]any{"endpoint": "http://localhost:4566"}),
			wantPublic: `{"event_bus":"orders","region":"us-east-1","endpoint":"http://localhost:4566"}`, wantDest: "us-east-1/orders"},

		{name: "not an object", raw: `[]`, wantField: "sink", wantMessage: "JSON object"},
		{name: "unknown field", raw: sinkObject(map[string]any{"session_token": "x"}), wantField: "sink.session_token", wantMessage: "unknown field"},
		{name: "wrong type", raw: sinkObject(map[string]any{"type": "sqs"}), wantField: "sink.type", wantMessage: `"eventbridge"`},
		{name: "missing bus", raw: sinkObject(map[string]any{"event_bus": nil}), wantField: "sink.event_bus", wantMessage: "is required"},
		{name: "empty bus", raw: sinkObject(map[string]any{"event_bus": ""}), wantField: "sink.event_bus", wantMessage: "is required"},
		{name: "bus not a string", raw: sinkObject(map[string]any{"event_bus": 7}), wantField: "sink.event_bus", wantMessage: "must be a string"},
		{name: "bus with spaces", raw: sinkObject(map[string]any{"event_bus": "my bus"}), wantField: "sink.event_bus", wantMessage: "letters, digits"},
		{name: "bus ARN of another region", raw: sinkObject(map[string]any{"event_bus": "arn:aws:events:eu-west-1:123456789012:event-bus/orders"}),
			wantField: "sink.event_bus", wantMessage: "region eu-west-1, not the sink's region us-east-1"},
		{name: "bus ARN of another service", raw: sinkObject(map[string]any{"event_bus": "arn:aws:sqs:us-east-1:123456789012:orders"}),
			wantField: "sink.event_bus", wantMessage: "event bus name or an arn"},
		{name: "missing region", raw: sinkObject(map[string]any{"region": nil}), wantField: "sink.region", wantMessage: "is required"},
		{name: "region that would steer the host", raw: sinkObject(map[string]any{"region": "evil.example.com#"}), wantField: "sink.region", wantMessage: "AWS region"},
		{name: "missing access key", raw: sinkObject(map[string]any{"access_key_id": nil}), wantField: "sink.access_key_id", wantMessage: "is required"},
		{name: "access key with punctuation", raw: sinkObject(map[string]any{"access_key_id": "AKIA-123"}), wantField: "sink.access_key_id", wantMessage: "letters, digits"},
		{name: "missing secret", raw: sinkObject(map[string]any{"secret_access_key": nil}), wantField: "sink.secret_access_key", wantMessage: "is required"},
		{name: "secret pasted with a newline", raw: sinkObject(map[string]any{"secret_access_key": testSecret + "\n"}), wantField: "sink.secret_access_key", wantMessage: "printable ASCII"},
		{name: "endpoint not http", raw: sinkObject(map[string]any{"endpoint": "ftp://events.example.com"}), wantField: "sink.endpoint", wantMessage: "scheme"},
		{name: "endpoint with user information", raw: sinkObject(map[string]any{"endpoint": "https://u:p@events.example.com"}), wantField: "sink.endpoint", wantMessage: "user information"},
		{name: "endpoint with a query", raw: sinkObject(map[string]any{"endpoint": "https://events.example.com/?x=1"}), wantField: "sink.endpoint", wantMessage: "query"},
		{name: "private endpoint literal", raw: sinkObject(map[string]any{"endpoint": "http://127.0.0.1:4566"}), wantField: "sink.endpoint", wantMessage: "refused"},
		{name: "metadata endpoint literal", raw: sinkObject(map[string]any{"endpoint": "http://169.254.169.254/"}), wantField: "sink.endpoint", wantMessage: "refused"},
		{name: "detail type too long", raw: sinkObject(map[string]any{"detail_type": strings.Repeat("d", MaxDetailTypeLength+1)}), wantField: "sink.detail_type", wantMessage: "at most"},
		{name: "detail type with control characters", raw: sinkObject(map[string]any{"detail_type": "a\tb"}), wantField: "sink.detail_type", wantMessage: "control"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := NewType(Options{AllowPrivate: tc.allowPrivate}).Parse(json.RawMessage(tc.raw))
			if tc.wantField != "" {
				fieldErr, ok := errors.AsType[*sink.FieldError](err)
				if !ok {
					t.Fatalf("Parse = %+v, %v; want a *sink.FieldError", cfg, err)
				}
				if fieldErr.Field != tc.wantField || !strings.Contains(fieldErr.Message, tc.wantMessage) {
					t.Fatalf("Parse error %q, want field %s mentioning %q", fieldErr, tc.wantField, tc.wantMessage)
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
			wantCreds := `{"access_key_id":"` + testKeyID + `","secret_access_key":"` + testSecret + `"}`
			if string(cfg.Credentials) != wantCreds {
				t.Errorf("Credentials = %s, want %s", cfg.Credentials, wantCreds)
			}
			for _, shown := range []string{string(cfg.Public), cfg.Destination} {
				if strings.Contains(shown, testSecret) || strings.Contains(shown, testKeyID) {
					t.Errorf("%q carries a credential", shown)
				}
			}
		})
	}
}

func TestOpenRejectsBrokenStoredConfig(t *testing.T) {
	typ := NewType(Options{})
	good, err := typ.Parse(json.RawMessage(sinkObject(nil)))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  sink.Config
		want string
	}{
		{"public not JSON", sink.Config{Public: json.RawMessage(`x`), Credentials: good.Credentials}, "not a JSON object"},
		{"public without region", sink.Config{Public: json.RawMessage(`{"event_bus":"orders"}`), Credentials: good.Credentials}, "sink.region"},
		{"no credentials", sink.Config{Public: good.Public}, "credentials are not a JSON object"},
		{"empty secret", sink.Config{Public: good.Public, Credentials: json.RawMessage(`{"access_key_id":"AKIA1","secret_access_key":""}`)}, "sink.secret_access_key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := typ.Open(tc.cfg, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v, %v; want an error mentioning %q", s, err, tc.want)
			}
		})
	}
	s, err := typ.Open(good, nil)
	if err != nil {
		t.Fatalf("Open(parsed config) = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
}
