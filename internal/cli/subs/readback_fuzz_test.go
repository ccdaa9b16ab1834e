package subs

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzDecodeUpdate: any document a support engineer feeds to
// subs update --from-file decodes or is refused without a panic, and one
// that decodes never names another subscription.
func FuzzDecodeUpdate(f *testing.F) {
	const id = "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b"
	for _, seed := range []string{
		`{"id":"` + id + `","name":"orders","sink":{"type":"webhook","url":"https://x.example/h"},"created_at":"2026-01-01T00:00:00Z"}`,
		`{"id":"0196A1C2-7D3E-7F00-8A4B-1C2D3E4F5A6B","event_types":["*"]}`,
		`{"id":"01960000-0000-7000-8000-000000000000","name":"other"}`,
		`{"id":7}`, `{"id":null}`, `{"colour":"red"}`, `{} {}`, `null`, `[]`, `{"name":`,
		`{"signing_secret":"****","sink":{"type":"sqs","secret_access_key":"****"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		decoded, err := decodeUpdate(bytes.NewReader(doc), "test.json")
		if err == nil {
			err = decoded.checkFor(id)
		}
		if err != nil {
			return
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(doc, &fields) != nil {
			return // a stream json.Unmarshal refuses but the decoder took
		}
		if raw, ok := fields["id"]; ok {
			var other string
			if json.Unmarshal(raw, &other) == nil && !strings.EqualFold(other, id) {
				t.Fatalf("a document naming %q was accepted for %s", other, id)
			}
		}
	})
}
