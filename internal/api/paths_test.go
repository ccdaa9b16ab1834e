package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestNonCanonicalPathsAreJSON: paths the mux would clean and redirect
// (with an HTML body) are refused in JSON instead, never redirected.
func TestNonCanonicalPathsAreJSON(t *testing.T) {
	h := newHarness(t, testAdminToken)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{
		"/v1//subscriptions",
		"/admin/../v1/subscriptions",
		"/v1/./subscriptions",
		"//admin/tenants",
		"/admin/tenants/..",
		"/v1/subscriptions/../../admin/tenants",
		"/healthz/.",
	} {
		req, err := http.NewRequest(http.MethodGet, h.url+p, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+testAdminToken)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var body map[string]any
		if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			json.Unmarshal(raw, &body) != nil || body["code"] != "not_found" || resp.Header.Get("Location") != "" {
			t.Errorf("GET %s = %d %q (Location %q): %s, want 404 not_found JSON", p, resp.StatusCode,
				resp.Header.Get("Content-Type"), resp.Header.Get("Location"), raw)
		}
	}
}
