package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Every /admin and /v1 route holds its query to one rule: a parameter it
// does not read, or one given twice, is 400 invalid_request naming it.
func TestQueryParametersAreOneRuleOnEveryRoute(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, token := h.tenantWithKey(t, "acme")
	for _, pattern := range h.server.patterns {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok || !strings.HasPrefix(path, "/admin/") && !strings.HasPrefix(path, "/v1/") {
			continue
		}
		path = strings.NewReplacer("{id}", "acme", "{key_id}", "01900000-0000-7000-8000-000000000001").Replace(path)
		if strings.HasPrefix(path, "/v1/") {
			path = strings.Replace(path, "/acme", "/01900000-0000-7000-8000-000000000001", 1)
		}
		c := call{method: method, path: path, token: testAdminToken}
		if strings.HasPrefix(path, "/v1/") {
			c.token = token
		}
		cases := map[string]string{"bogus": "?bogus=1"}
		for _, name := range queryParams[pattern] {
			cases[name] = "?" + name + "=1&" + name + "=1"
		}
		for field, query := range cases {
			c := c
			c.path += query
			r := h.send(t, c)
			details, _ := r.body["details"].(map[string]any)
			if r.status != http.StatusBadRequest || r.body["code"] != CodeInvalidRequest || details["field"] != field {
				t.Errorf("%s %s = %d %s, want 400 invalid_request naming %s", c.method, c.path, r.status, r.raw, field)
			}
		}
	}
	// Every route named in the rule is served: a renamed route cannot
	// leave its parameters behind.
	for pattern := range queryParams {
		if !slices.Contains(h.server.patterns, pattern) {
			t.Errorf("queryParams names %q, which is not a route", pattern)
		}
	}
}

// The parameters a route reads still work once checked.
func TestQueryParametersARouteReadsAreAccepted(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, token := h.tenantWithKey(t, "acme")
	h.must(t, http.StatusOK, call{method: "GET", path: "/v1/inbox?type=x&limit=5&since=2026-01-01T00:00:00Z", token: token})
	h.must(t, http.StatusOK, call{method: "GET", path: "/admin/quarantine?reason=invalid_time&topic=t&limit=2", token: testAdminToken})
	h.must(t, http.StatusOK, call{method: "DELETE", path: "/admin/tenants/acme?purge=true", token: testAdminToken})
}
