package idempotency

import (
	"bytes"
	"testing"

	"github.com/hubctl/hubctl/internal/store/catalog"
)

func TestDecideIdempotent(t *testing.T) {
	fp := Fingerprint("POST", "/v1/subscriptions", "", "acme", []byte(`{"name":"a"}`))
	cases := []struct {
		name     string
		existing catalog.IdempotencyRecord
		want     Action
	}{
		{"same request, done", catalog.IdempotencyRecord{Fingerprint: fp, Done: true, Status: 201}, Replay},
		{"same request, running", catalog.IdempotencyRecord{Fingerprint: fp}, InProgress},
		{"another request, done", catalog.IdempotencyRecord{Fingerprint: []byte("other"), Done: true}, Reused},
		{"another request, running", catalog.IdempotencyRecord{Fingerprint: []byte("other")}, Reused},
	}
	for _, c := range cases {
		if got := Decide(c.existing, fp); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestIdempotencyFingerprintTellsRequestsApart(t *testing.T) {
	base := Fingerprint("POST", "/v1/subscriptions", "", "acme", []byte("{}"))
	for name, other := range map[string][]byte{
		"method":            Fingerprint("PUT", "/v1/subscriptions", "", "acme", []byte("{}")),
		"path":              Fingerprint("POST", "/v1/subscriptions/x/recover", "", "acme", []byte("{}")),
		"query":             Fingerprint("POST", "/v1/subscriptions", "dry_run=true", "acme", []byte("{}")),
		"tenant":            Fingerprint("POST", "/v1/subscriptions", "", "globex", []byte("{}")),
		"body":              Fingerprint("POST", "/v1/subscriptions", "", "acme", []byte("{ }")),
		"bytes moved parts": Fingerprint("POST", "/v1/subscriptions", "", "acm", []byte("e{}")),
	} {
		if bytes.Equal(base, other) {
			t.Errorf("a request with another %s has the same fingerprint", name)
		}
	}
	if !bytes.Equal(base, Fingerprint("POST", "/v1/subscriptions", "", "acme", []byte("{}"))) {
		t.Error("the same request has another fingerprint")
	}
}

func TestCheckIdempotencyKey(t *testing.T) {
	for key, ok := range map[string]bool{
		"7f1c1c0e-5b4e-4a8e-9d63-0c6f2f4b8a11": true,
		"a":                                    true,
		string(bytes.Repeat([]byte("k"), 255)): true,
		"":                                     false,
		string(bytes.Repeat([]byte("k"), 256)): false,
		"with space":                           false,
		"tab\t":                                false,
		"naïve":                                false,
	} {
		if err := CheckKey(key); (err == nil) != ok {
			t.Errorf("CheckKey(%q) = %v, want ok %v", key, err, ok)
		}
	}
}
