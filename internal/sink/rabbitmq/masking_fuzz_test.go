package rabbitmq

import (
	"encoding/json"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// FuzzRestoreMasked: whatever sink object a caller sends back, restoring
// masks never panics, never puts the stored password anywhere but into a
// URL for the same broker and user, and never quotes it in an error.
func FuzzRestoreMasked(f *testing.F) {
	typ := NewType(Options{})
	const storedURL = "amqp://bob:" + secretPassword + "@rabbit.example.com/prod"
	current, err := typ.Parse(json.RawMessage(`{"type":"rabbitmq","url":"` + storedURL + `","exchange":"orders"}`))
	if err != nil {
		f.Fatal(err)
	}
	stored, err := amqp.ParseURI(storedURL)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"type":"rabbitmq","url":"amqp://bob:****@rabbit.example.com/prod","exchange":"orders"}`,
		`{"type":"rabbitmq","url":"amqp://bob:****@evil.example.com/prod","exchange":"orders"}`,
		`{"type":"rabbitmq","url":"amqp://eve:****@rabbit.example.com/prod","exchange":"orders"}`,
		`{"type":"rabbitmq","url":"amqps://bob:%2A%2A%2A%2A@RABBIT.example.com.:5671/x","exchange":"o"}`,
		`{"type":"rabbitmq","url":"amqp://bob:****@[::1]:5672/","exchange":"o"}`,
		`{"url":7}`, `[]`, `null`, `{"url":"::"}`, `{"url":"amqp://:****@"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		restored, err := typ.RestoreMasked(raw, &current)
		if err != nil {
			if strings.Contains(err.Error(), secretPassword) {
				t.Fatalf("error quotes the stored password: %v", err)
			}
			return
		}
		if !strings.Contains(string(restored), secretPassword) || strings.Contains(string(raw), secretPassword) {
			return // nothing restored
		}
		var fields struct{ URL string }
		if err := json.Unmarshal(restored, &fields); err != nil {
			t.Fatalf("restored object is not JSON: %v", err)
		}
		uri, err := amqp.ParseURI(fields.URL)
		if err != nil {
			t.Fatalf("password restored into a URL amqp cannot parse: %v", err)
		}
		if login(uri) != login(stored) {
			t.Fatalf("password restored into %q, a URL for another broker or user", fields.URL)
		}
	})
}
