package api

import (
	"net/http"
	"testing"
)

// FuzzAPIBodies posts arbitrary bytes to every route that takes a body:
// whatever arrives, the answer is never a 500. Seeds live in
// testdata/fuzz/FuzzAPIBodies and below.
func FuzzAPIBodies(f *testing.F) {
	h := newHarness(f, testAdminToken)
	// The admin routes change their own tenant, so a body that deactivates
	// it cannot lock the tenant API routes out for the rest of the run.
	h.admin(f, http.StatusCreated, "POST", "/admin/tenants", `{"id":"fuzzed"}`)
	_, key := h.tenantWithKey(f, "acme")
	rcv := newReceiver(f, http.StatusOK)
	hook := "/v1/subscriptions/" + h.v1(f, http.StatusCreated, key, "POST", "/v1/subscriptions", webhookBody(rcv)).body["id"].(string)
	pull := "/v1/subscriptions/" + h.v1(f, http.StatusCreated, key, "POST", "/v1/subscriptions", pullBody).body["id"].(string)

	routes := []struct{ method, path, token string }{
		{"POST", "/admin/tenants", testAdminToken},
		{"PATCH", "/admin/tenants/fuzzed", testAdminToken},
		{"POST", "/admin/tenants/fuzzed/keys", testAdminToken},
		{"POST", "/v1/subscriptions", key},
		{"PATCH", hook, key},
		{"PATCH", pull, key},
		{"POST", hook + "/verify", key},
		{"POST", hook + "/rotate-secret", key},
		{"POST", pull + "/rotate-secret", key},
		{"POST", hook + "/enable", key},
		{"POST", hook + "/disable", key},
		{"DELETE", "/v1/subscriptions/0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b", key},
	}
	f.Add([]byte(`{"id":"fuzz-seed"}`))
	f.Add([]byte(webhookBody(rcv)))
	f.Add([]byte(pullBody))
	f.Add([]byte(`{"name":"n","sink":{"type":"pull"},"event_types":["a.*"],"schema_major":2,"origin":"o","retry_schedule":["0s","10h"],"attempt_timeout":"60s","enabled":false}`))
	f.Add([]byte(`{"origin":null,"retry_schedule":null,"sink":{"type":"webhook","url":"` + rcv.url + `"}}`))
	f.Add([]byte(`{"signing_secret":"whsec_fuzz-seed-secret-0123456789"}`))
	f.Add([]byte(`{"sink":{"type":"webhook","url":"` + rcv.url + `","extra":{"\u0000":1}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, route := range routes {
			r := h.send(t, call{method: route.method, path: route.path, token: route.token, body: string(body)})
			if r.status >= http.StatusInternalServerError {
				t.Fatalf("%s %s with %q = %d %s", route.method, route.path, body, r.status, r.raw)
			}
		}
	})
}
