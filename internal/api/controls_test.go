package api

import (
	"net/http"
	"testing"
)

func TestSubscriptionOrderingAndRateLimit(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, key := h.tenantWithKey(t, "acme")
	rcv := newReceiver(t, http.StatusOK)
	sinkJSON := `{"type":"webhook","url":"` + rcv.url + `"}`

	plain := h.v1(t, http.StatusCreated, key, "POST", "/v1/subscriptions", `{"name":"plain","sink":`+sinkJSON+`,"event_types":["*"]}`)
	if plain.body["ordering"] != "none" || plain.body["rate_limit"] != nil || plain.body["rate"] != nil {
		t.Fatalf("defaults: %s", plain.raw)
	}
	created := h.v1(t, http.StatusCreated, key, "POST", "/v1/subscriptions",
		`{"name":"ledger","sink":`+sinkJSON+`,"event_types":["*"],"ordering":"subject","rate_limit":20}`)
	if created.body["ordering"] != "subject" || created.body["rate_limit"] != 20.0 {
		t.Fatalf("create answered %s", created.raw)
	}
	path := "/v1/subscriptions/" + created.body["id"].(string)
	got := h.v1(t, http.StatusOK, key, "GET", path, "")
	rate, _ := got.body["rate"].(map[string]any)
	if rate["limit"] != 20.0 || rate["current"] != 0.0 || rate["throttled"] != false || rate["next_slot_at"] != nil {
		t.Errorf("get answered rate %v: %s", rate, got.raw)
	}
	if list := h.v1(t, http.StatusOK, key, "GET", "/v1/subscriptions", ""); list.raw == "" {
		t.Fatal("empty list")
	}

	patched := h.v1(t, http.StatusOK, key, "PATCH", path, `{"ordering":"none","rate_limit":null}`)
	if patched.body["ordering"] != "none" || patched.body["rate_limit"] != nil {
		t.Errorf("patch answered %s", patched.raw)
	}

	for _, c := range []struct{ name, method, path, body, field string }{
		{"unknown ordering", "POST", "/v1/subscriptions", `{"name":"x","sink":` + sinkJSON + `,"event_types":["*"],"ordering":"key"}`, "ordering"},
		{"zero rate", "POST", "/v1/subscriptions", `{"name":"x","sink":` + sinkJSON + `,"event_types":["*"],"rate_limit":0}`, "rate_limit"},
		{"negative rate", "PATCH", path, `{"rate_limit":-3}`, "rate_limit"},
		{"ordered pull", "POST", "/v1/subscriptions", `{"name":"x","sink":{"type":"pull"},"event_types":["*"],"ordering":"tenant"}`, "ordering"},
		{"limited pull", "POST", "/v1/subscriptions", `{"name":"x","sink":{"type":"pull"},"event_types":["*"],"rate_limit":5}`, "rate_limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := h.send(t, call{method: c.method, path: c.path, token: key, body: c.body})
			details, _ := r.body["details"].(map[string]any)
			if r.status != http.StatusBadRequest || r.body["code"] != "invalid_request" || details["field"] != c.field {
				t.Errorf("= %d %s, want 400 invalid_request on %s", r.status, r.raw, c.field)
			}
		})
	}
}
