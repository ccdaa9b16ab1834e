package webhook

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/sink"
)

func TestParse(t *testing.T) {
	longURL := "https://hooks.example.com/" + strings.Repeat("a", MaxURLLength)
	tests := []struct {
		name         string
		raw          string
		allowPrivate bool
		wantPublic   string // on success
		wantDest     string // on success
		wantField    string // on failure
		wantMessage  string // a fragment of the failure
	}{
		{name: "https with path and query", raw: `{"type":"webhook","url":"https://hooks.example.com/in?a=1&b=<2>"}`,
			wantPublic: `{"url":"https://hooks.example.com/in?a=1&b=<2>"}`, wantDest: "https://hooks.example.com:443"},
		{name: "field order is free", raw: `{"url":"http://hooks.example.com:8080/x","type":"webhook"}`,
			wantPublic: `{"url":"http://hooks.example.com:8080/x"}`, wantDest: "http://hooks.example.com:8080"},
		{name: "host case normalised in destination only", raw: `{"type":"webhook","url":"HTTPS://Hooks.Example.COM./Path"}`,
			wantPublic: `{"url":"HTTPS://Hooks.Example.COM./Path"}`, wantDest: "https://hooks.example.com:443"},
		{name: "hostnames are judged at dial time", raw: `{"type":"webhook","url":"http://localhost:9000/"}`,
			wantPublic: `{"url":"http://localhost:9000/"}`, wantDest: "http://localhost:9000"},
		{name: "public IPv6 literal", raw: `{"type":"webhook","url":"https://[2606:4700::6810:84E5]:8443/"}`,
			wantPublic: `{"url":"https://[2606:4700::6810:84E5]:8443/"}`, wantDest: "https://[2606:4700::6810:84e5]:8443"},
		{name: "private literal allowed in dev", raw: `{"type":"webhook","url":"http://127.0.0.1:8080/hook"}`, allowPrivate: true,
			wantPublic: `{"url":"http://127.0.0.1:8080/hook"}`, wantDest: "http://127.0.0.1:8080"},

		{name: "not an object", raw: `["https://hooks.example.com"]`, wantField: "sink", wantMessage: "JSON object"},
		{name: "null", raw: `null`, wantField: "sink", wantMessage: "JSON object"},
		{name: "empty input", raw: ``, wantField: "sink", wantMessage: "JSON object"},
		{name: "unknown field", raw: `{"type":"webhook","url":"https://hooks.example.com","secret":"x"}`,
			wantField: "sink.secret", wantMessage: "unknown field"},
		{name: "field names are exact", raw: `{"type":"webhook","URL":"https://hooks.example.com"}`,
			wantField: "sink.URL", wantMessage: "unknown field"},
		{name: "wrong type", raw: `{"type":"sqs","url":"https://hooks.example.com"}`, wantField: "sink.type", wantMessage: `"webhook"`},
		{name: "missing type", raw: `{"url":"https://hooks.example.com"}`, wantField: "sink.type"},
		{name: "missing url", raw: `{"type":"webhook"}`, wantField: "sink.url", wantMessage: "required"},
		{name: "null url", raw: `{"type":"webhook","url":null}`, wantField: "sink.url", wantMessage: "required"},
		{name: "empty url", raw: `{"type":"webhook","url":""}`, wantField: "sink.url", wantMessage: "required"},
		{name: "url not a string", raw: `{"type":"webhook","url":42}`, wantField: "sink.url", wantMessage: "string"},
		{name: "bad scheme", raw: `{"type":"webhook","url":"ftp://hooks.example.com/"}`, wantField: "sink.url", wantMessage: "scheme"},
		{name: "relative url", raw: `{"type":"webhook","url":"/hooks"}`, wantField: "sink.url", wantMessage: "absolute"},
		{name: "userinfo", raw: `{"type":"webhook","url":"https://bob:hunter2@hooks.example.com/"}`,
			wantField: "sink.url", wantMessage: "user information"},
		{name: "port out of range", raw: `{"type":"webhook","url":"https://hooks.example.com:70000/"}`, wantField: "sink.url", wantMessage: "port"},
		{name: "too long", raw: `{"type":"webhook","url":"` + longURL + `"}`, wantField: "sink.url", wantMessage: "at most"},
		{name: "loopback literal", raw: `{"type":"webhook","url":"http://127.0.0.1:8080/"}`, wantField: "sink.url", wantMessage: "loopback"},
		{name: "metadata literal", raw: `{"type":"webhook","url":"http://169.254.169.254/latest/meta-data"}`,
			wantField: "sink.url", wantMessage: "link-local"},
		{name: "mapped loopback literal", raw: `{"type":"webhook","url":"http://[::ffff:127.0.0.1]/"}`,
			wantField: "sink.url", wantMessage: "IPv4-mapped"},
		{name: "ULA literal", raw: `{"type":"webhook","url":"http://[fd00::1]/"}`, wantField: "sink.url", wantMessage: "unique local"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			typ := NewType(Options{AllowPrivate: tc.allowPrivate})
			cfg, err := typ.Parse(json.RawMessage(tc.raw))
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if string(cfg.Public) != tc.wantPublic {
					t.Errorf("Public = %s, want %s", cfg.Public, tc.wantPublic)
				}
				if cfg.Destination != tc.wantDest {
					t.Errorf("Destination = %q, want %q", cfg.Destination, tc.wantDest)
				}
				if cfg.Credentials != nil {
					t.Errorf("Credentials = %s, want none", cfg.Credentials)
				}
				return
			}
			fieldErr, ok := errors.AsType[*sink.FieldError](err)
			if !ok {
				t.Fatalf("Parse error %v is not a *sink.FieldError", err)
			}
			if fieldErr.Field != tc.wantField || !strings.Contains(fieldErr.Message, tc.wantMessage) {
				t.Fatalf("Parse error = %q, want field %s and a message mentioning %q", fieldErr, tc.wantField, tc.wantMessage)
			}
			if strings.Contains(fieldErr.Message, "hunter2") {
				t.Fatalf("Parse error %q repeats the password", fieldErr)
			}
		})
	}
}

func TestDestination(t *testing.T) {
	tests := []struct{ url, want string }{
		{"https://hooks.example.com/a/b?c=d#e", "https://hooks.example.com:443"},
		{"http://hooks.example.com", "http://hooks.example.com:80"},
		{"HTTP://HOOKS.Example.com:8080", "http://hooks.example.com:8080"},
		{"https://hooks.example.com.:0443/", "https://hooks.example.com:443"},
		{"https://hooks.example.com:443/", "https://hooks.example.com:443"},
		{"http://[2001:DB8:0::1]/", "http://[2001:db8::1]:80"},
		{"http://[::ffff:7f00:1]:81/", "http://[::ffff:127.0.0.1]:81"},
		{"http://[fe80::1%25eth0]:80/", "http://[fe80::1%eth0]:80"},
		{"https://user:pw@hooks.example.com/", "https://hooks.example.com:443"},
	}
	for _, tc := range tests {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatalf("url.Parse(%q): %v", tc.url, err)
		}
		if got := Destination(u); got != tc.want {
			t.Errorf("Destination(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

func TestOpenRejects(t *testing.T) {
	typ := NewType(Options{})
	good := sink.Config{Public: json.RawMessage(`{"url":"https://hooks.example.com/"}`)}
	tests := []struct {
		name    string
		cfg     sink.Config
		secrets []string
		want    string
	}{
		{"no secret", good, nil, "1 or 2 signing secrets"},
		{"three secrets", good, []string{"whsec_a", "whsec_b", "whsec_c"}, "1 or 2 signing secrets"},
		{"empty secret", good, []string{"whsec_a", ""}, "empty signing secret"},
		{"stored config not JSON", sink.Config{Public: json.RawMessage(`nope`)}, []string{"whsec_a"}, "not a JSON object"},
		{"stored url invalid", sink.Config{Public: json.RawMessage(`{"url":"ftp://x?token=abc"}`)}, []string{"whsec_a"}, "scheme"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := typ.Open(tc.cfg, tc.secrets)
			if err == nil {
				s.Close()
				t.Fatalf("Open succeeded, want an error mentioning %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open error %q, want it to mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "token=abc") {
				t.Fatalf("Open error %q repeats the URL", err)
			}
		})
	}
}

func TestOpenAcceptsParsedConfig(t *testing.T) {
	typ := NewType(Options{})
	cfg, err := typ.Parse(json.RawMessage(`{"type":"webhook","url":"https://hooks.example.com/in"}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := typ.Open(cfg, []string{"whsec_new-secret-0123456789abcdef", "whsec_old-secret-0123456789abcdef"})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if typ.Name() != "webhook" {
		t.Fatalf("Name = %q", typ.Name())
	}
}
