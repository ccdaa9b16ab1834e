package api

import (
	"net/http"
	"strings"
	"testing"
)

func TestSubscriptionFilter(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, key := h.tenantWithKey(t, "acme")
	rcv := newReceiver(t, http.StatusOK)
	body := func(filter string) string {
		return `{"name":"big ones","sink":{"type":"webhook","url":"` + rcv.url + `"},"event_types":["*"],"filter":` + filter + `}`
	}

	created := h.v1(t, http.StatusCreated, key, "POST", "/v1/subscriptions", body(`"data.amount > 100"`))
	if created.body["filter"] != "data.amount > 100" {
		t.Fatalf("create answered filter %v: %s", created.body["filter"], created.raw)
	}
	path := "/v1/subscriptions/" + created.body["id"].(string)
	if got := h.v1(t, http.StatusOK, key, "GET", path, ""); got.body["filter"] != "data.amount > 100" {
		t.Fatalf("get answered filter %v", got.body["filter"])
	}

	refusals := []struct {
		name   string
		method string
		path   string
		body   string
		line   float64 // 0: no position
		column float64
		cost   bool
	}{
		{"syntax error", "POST", "/v1/subscriptions", body(`"data.amount >"`), 1, 14, false},
		{"unknown variable on line 2", "POST", "/v1/subscriptions", body(`"type == \"a.b\" ||\n  kind == 1"`), 2, 3, false},
		{"expensive", "POST", "/v1/subscriptions", body(`"data.items.all(a, data.items.all(b, a == b))"`), 0, 0, true},
		{"empty", "POST", "/v1/subscriptions", body(`""`), 0, 0, false},
		{"patch syntax error", "PATCH", path, `{"filter":"subject =="}`, 1, 11, false},
		{"patch expensive", "PATCH", path, `{"filter":"data.a.exists(x, data.b.exists(y, x == y))"}`, 0, 0, true},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			r := h.send(t, call{method: c.method, path: c.path, token: key, body: c.body})
			if r.status != http.StatusBadRequest || r.body["code"] != "invalid_filter" {
				t.Fatalf("= %d %s, want 400 invalid_filter", r.status, r.raw)
			}
			details, _ := r.body["details"].(map[string]any)
			if details["field"] != "filter" || details["message"] == "" || details["message"] == nil {
				t.Errorf("details lack the field or message: %s", r.raw)
			}
			pos, _ := details["position"].(map[string]any)
			if c.line > 0 && (pos["line"] != c.line || pos["column"] != c.column) {
				t.Errorf("details.position = %v, want line %v column %v", details["position"], c.line, c.column)
			}
			if c.cost && (details["estimated_cost"] == nil || details["cost_limit"] == nil) {
				t.Errorf("a refusal for cost does not give the cost: %s", r.raw)
			}
		})
	}

	// The refused PATCHes left the filter alone; null clears it.
	if got := h.v1(t, http.StatusOK, key, "GET", path, ""); got.body["filter"] != "data.amount > 100" {
		t.Fatalf("a refused PATCH changed the filter to %v", got.body["filter"])
	}
	patched := h.v1(t, http.StatusOK, key, "PATCH", path, `{"filter":"subject.startsWith(\"acct-\")"}`)
	if patched.body["filter"] != `subject.startsWith("acct-")` {
		t.Fatalf("PATCH answered filter %v", patched.body["filter"])
	}
	cleared := h.v1(t, http.StatusOK, key, "PATCH", path, `{"filter":null}`)
	if v, present := cleared.body["filter"]; !present || v != nil {
		t.Fatalf("after clearing, filter = %v (present %v), want null: %s", v, present, cleared.raw)
	}
	if strings.Contains(cleared.raw, "acct-") {
		t.Fatalf("the cleared filter still shows: %s", cleared.raw)
	}
}
