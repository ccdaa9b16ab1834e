package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestJSONTextRefused: what encoding/json would accept silently (invalid
// UTF-8 turned into U+FFFD, a key given twice) is a 400 naming the field.
func TestJSONTextRefused(t *testing.T) {
	type target struct {
		Name string            `json:"name"`
		Tags []string          `json:"tags"`
		Sink map[string]any    `json:"sink"`
		Meta map[string]string `json:"meta"`
	}
	cases := []struct {
		name, body, field string
	}{
		{"invalid UTF-8 in a value", "{\"name\":\"a\xffb\"}", "name"},
		{"a lone high surrogate", `{"name":"a\ud800b"}`, "name"},
		{"a lone low surrogate", `{"name":"\udc00"}`, "name"},
		{"a high surrogate before an escaped backslash", `{"name":"\ud800\\u0041"}`, "name"},
		{"invalid UTF-8 in an array item", "{\"tags\":[\"ok\",\"\xc3\"]}", "tags[1]"},
		{"invalid UTF-8 deep in an object", "{\"sink\":{\"type\":\"webhook\",\"headers\":{\"x\":\"\xed\xa0\x80\"}}}", "sink.headers.x"},
		{"invalid UTF-8 in a key", "{\"meta\":{\"\xff\":\"v\"}}", "meta.\uFFFD"},
		{"a key twice", `{"name":"a","name":"b"}`, "name"},
		{"a key twice in other letter case", `{"name":"a","NAME":"b"}`, "NAME"},
		{"a nested key twice", `{"sink":{"type":"pull","type":"webhook"}}`, "sink.type"},
		{"a key twice in an object in an array", `{"sink":{"list":[{"a":1},{"a":1,"a":2}]}}`, "sink.list[1].a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var dst target
			err := decodeJSONBody([]byte(c.body), &dst)
			apiErr, ok := err.(*apiError)
			if !ok || apiErr.status != http.StatusBadRequest || apiErr.code != CodeInvalidRequest {
				t.Fatalf("err = %#v, want a 400 invalid_request", err)
			}
			if got := apiErr.details["field"]; got != c.field {
				t.Errorf("details.field = %q, want %q (%s)", got, c.field, apiErr.message)
			}
		})
	}
}

// TestJSONTextAccepted: what looks like the refused cases but is fine.
func TestJSONTextAccepted(t *testing.T) {
	type target struct {
		Name string         `json:"name"`
		Tags []string       `json:"tags"`
		Sink map[string]any `json:"sink"`
	}
	for _, body := range []string{
		`{"name":"\ufffd is a character"}`,
		"{\"name\":\"\uFFFD sent as UTF-8\"}",
		`{"name":"\ud83d\ude00 a pair"}`,
		`{"name":"\\ud800 is just text"}`,
		`{"tags":["a","a"]}`,
		`{"sink":{"a":{"x":1},"b":{"x":1}}}`,
		`{"name":"é ü 日本"}`,
	} {
		var dst target
		if err := decodeJSONBody([]byte(body), &dst); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

func TestJSONTooDeep(t *testing.T) {
	var dst map[string]any
	body := `{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`
	err := decodeJSONBody([]byte(body), &dst)
	if apiErr, ok := err.(*apiError); !ok || apiErr.status != http.StatusBadRequest || apiErr.details["offset"] == nil {
		t.Fatalf("err = %#v, want a 400 with the offset", err)
	}
}

// TestJSONTextRefusedOverHTTP: the same refusals on real routes, before
// anything is stored.
func TestJSONTextRefusedOverHTTP(t *testing.T) {
	h := newHarness(t, testAdminToken)
	h.admin(t, http.StatusCreated, "POST", "/admin/tenants", `{"id":"acme"}`)
	for _, c := range []struct{ path, body, field string }{
		{"/admin/tenants", `{"id":"one","id":"two"}`, "id"},
		{"/admin/tenants/acme/keys", "{\"name\":\"ci\xff\"}", "name"},
	} {
		r := h.admin(t, http.StatusBadRequest, "POST", c.path, c.body)
		details, _ := r.body["details"].(map[string]any)
		if r.body["code"] != CodeInvalidRequest || details["field"] != c.field {
			t.Errorf("POST %s %q = %s, want invalid_request on %s", c.path, c.body, r.raw, c.field)
		}
	}
	if r := h.admin(t, http.StatusOK, "GET", "/admin/tenants", ""); strings.Contains(r.raw, `"one"`) || strings.Contains(r.raw, `"two"`) {
		t.Errorf("a refused tenant was created: %s", r.raw)
	}
}

// FuzzCheckJSONText: whatever the body, the check never panics, and a
// valid JSON body it lets through is valid UTF-8.
func FuzzCheckJSONText(f *testing.F) {
	for _, seed := range []string{`{"a":"b"}`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"a":1,"A":2}`, `{"a":[{"b":"\ufffd"}]}`, `[[[[`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if err := checkJSONText(body); err != nil || !json.Valid(body) {
			return
		}
		if !utf8.Valid(body) {
			t.Fatalf("accepted invalid UTF-8: %q", body)
		}
	})
}
