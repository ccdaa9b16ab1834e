package api

import (
	"net/http"
	"testing"
)

// FuzzAPIBodies posts arbitrary bytes to every route that takes a body:
// whatever arrives, the answer is never a 500. Seeds live in
// testdata/fuzz/FuzzAPIBodies.
func FuzzAPIBodies(f *testing.F) {
	h := newHarness(f, testAdminToken)
	h.admin(f, http.StatusCreated, "POST", "/admin/tenants", `{"id":"acme"}`)
	routes := []struct{ method, path string }{
		{"POST", "/admin/tenants"},
		{"PATCH", "/admin/tenants/acme"},
		{"POST", "/admin/tenants/acme/keys"},
	}
	f.Add([]byte(`{"id":"fuzz-seed"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, route := range routes {
			r := h.send(t, call{method: route.method, path: route.path, token: testAdminToken, body: string(body)})
			if r.status >= http.StatusInternalServerError {
				t.Fatalf("%s %s with %q = %d %s", route.method, route.path, body, r.status, r.raw)
			}
		}
	})
}
