package api

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/crypto"
)

func TestAdminTenants(t *testing.T) {
	h := newHarness(t, testAdminToken)

	created := h.admin(t, http.StatusCreated, "POST", "/admin/tenants", `{"id":"acme"}`)
	if created.body["id"] != "acme" || created.body["status"] != "active" || created.body["created_at"] == nil {
		t.Errorf("created %s", created.raw)
	}
	if loc := created.header.Get("Location"); loc != "/admin/tenants/acme" {
		t.Errorf("Location = %q", loc)
	}
	h.admin(t, http.StatusCreated, "POST", "/admin/tenants", `{"id":"globex"}`)

	got := h.admin(t, http.StatusOK, "GET", "/admin/tenants/acme", "")
	if got.body["id"] != "acme" || got.body["status"] != "active" {
		t.Errorf("get %s", got.raw)
	}

	inactive := h.admin(t, http.StatusOK, "PATCH", "/admin/tenants/acme", `{"status":"inactive"}`)
	if inactive.body["status"] != "inactive" {
		t.Errorf("patch to inactive: %s", inactive.raw)
	}
	if again := h.admin(t, http.StatusOK, "GET", "/admin/tenants/acme", ""); again.body["status"] != "inactive" {
		t.Errorf("get after patch: %s", again.raw)
	}
	h.admin(t, http.StatusOK, "PATCH", "/admin/tenants/acme", `{"status":"active"}`)

	// Paging: a page of one, then the next by its cursor, then the end.
	var ids []string
	path := "/admin/tenants?limit=1"
	for range 5 {
		page := h.admin(t, http.StatusOK, "GET", path, "")
		for _, item := range page.body["items"].([]any) {
			ids = append(ids, item.(map[string]any)["id"].(string))
		}
		next, ok := page.body["next_cursor"].(string)
		if !ok {
			if _, present := page.body["next_cursor"]; !present {
				t.Errorf("next_cursor missing on the last page: %s", page.raw)
			}
			break
		}
		path = "/admin/tenants?limit=1&cursor=" + url.QueryEscape(next)
	}
	if fmt.Sprint(ids) != "[acme globex]" {
		t.Errorf("paged ids = %v", ids)
	}
}

func TestAdminAPIKeys(t *testing.T) {
	h := newHarness(t, testAdminToken)
	h.admin(t, http.StatusCreated, "POST", "/admin/tenants", `{"id":"acme"}`)

	created := h.admin(t, http.StatusCreated, "POST", "/admin/tenants/acme/keys", `{"name":"ci"}`)
	id, _ := created.body["id"].(string)
	token, _ := created.body["key"].(string)
	if id == "" || created.body["name"] != "ci" || !strings.HasPrefix(token, crypto.APITokenPrefix) || created.body["created_at"] == nil {
		t.Fatalf("created %s", created.raw)
	}

	if who := h.must(t, http.StatusOK, call{method: "GET", path: "/v1/test/whoami", token: token}); who.body["tenant"] != "acme" {
		t.Errorf("the new key acts as %s, want acme", who.raw)
	}

	list := h.admin(t, http.StatusOK, "GET", "/admin/tenants/acme/keys", "")
	items := list.body["items"].([]any)
	if len(items) != 1 || list.body["next_cursor"] != nil {
		t.Fatalf("list %s", list.raw)
	}
	item := items[0].(map[string]any)
	if item["id"] != id || item["name"] != "ci" || !strings.HasPrefix(token, item["prefix"].(string)) || item["last_used_at"] == nil {
		t.Errorf("listed %s", list.raw)
	}
	if _, shown := item["key"]; shown {
		t.Errorf("the listing has a key field: %s", list.raw)
	}
	assertNoSecret(t, "key listing", list.raw, token)

	revoked := h.admin(t, http.StatusOK, "DELETE", "/admin/tenants/acme/keys/"+id, "")
	if revoked.body["id"] != id || revoked.body["revoked_at"] == nil {
		t.Errorf("revoke %s", revoked.raw)
	}
	assertNoSecret(t, "revoke answer", revoked.raw, token)
	h.must(t, http.StatusUnauthorized, call{method: "GET", path: "/v1/test/whoami", token: token})
	// Revoking again is not an error.
	h.admin(t, http.StatusOK, "DELETE", "/admin/tenants/acme/keys/"+id, "")
}

func TestAdminQuarantine(t *testing.T) {
	h := newHarness(t, testAdminToken)
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for i, reason := range []string{"missing_id", "invalid_time", "invalid_time"} {
		_, err := h.store.Pool.Exec(context.Background(), `
			INSERT INTO quarantine (reason, detail, topic, kafka_partition, kafka_offset,
			                        record_key, header_keys, header_values, value, received_at, value_size, value_sha256)
			VALUES ($1, 'why', 'lerian.streaming.a_b.c', 0, $2, NULL, '{}', '{}', $3::bytea, $4, octet_length($3::bytea), sha256($3::bytea))`,
			reason, i, []byte("not json"), at.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
	}

	all := h.admin(t, http.StatusOK, "GET", "/admin/quarantine", "")
	if n := len(all.body["items"].([]any)); n != 3 || all.body["next_cursor"] != nil {
		t.Errorf("all: %d items: %s", n, all.raw)
	}
	page := h.admin(t, http.StatusOK, "GET", "/admin/quarantine?reason=invalid_time&topic=lerian.streaming.a_b.c&limit=1", "")
	items := page.body["items"].([]any)
	next, _ := page.body["next_cursor"].(string)
	if len(items) != 1 || next == "" {
		t.Fatalf("first filtered page: %s", page.raw)
	}
	item := items[0].(map[string]any)
	if item["reason"] != "invalid_time" || item["offset"] != float64(2) || item["value_prefix_base64"] != base64.StdEncoding.EncodeToString([]byte("not json")) ||
		item["value_size"] != float64(8) || item["value_truncated"] != false {
		t.Errorf("item %s", page.raw)
	}
	whole := h.admin(t, http.StatusOK, "GET", fmt.Sprintf("/admin/quarantine/%v", item["id"]), "")
	if whole.body["value_base64"] != base64.StdEncoding.EncodeToString([]byte("not json")) || whole.body["value_sha256"] != item["value_sha256"] {
		t.Errorf("GET one record: %s", whole.raw)
	}
	for _, id := range []string{"0", "-1", "01", "99999", "x", "1e3"} {
		if r := h.admin(t, http.StatusNotFound, "GET", "/admin/quarantine/"+id, ""); r.body["code"] != "quarantine_not_found" {
			t.Errorf("GET /admin/quarantine/%s: %s", id, r.raw)
		}
	}
	last := h.admin(t, http.StatusOK, "GET", "/admin/quarantine?reason=invalid_time&limit=1&cursor="+url.QueryEscape(next), "")
	if items := last.body["items"].([]any); len(items) != 1 || items[0].(map[string]any)["offset"] != float64(1) || last.body["next_cursor"] != nil {
		t.Errorf("second filtered page: %s", last.raw)
	}
}

// TestValidationErrors sends every way of getting each admin endpoint's
// input wrong and checks the status, code and the field or offset named.
func TestValidationErrors(t *testing.T) {
	h := newHarness(t, testAdminToken)
	h.tenantWithKey(t, "acme")
	const missingKey = "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b"
	oversize := `{"id":"` + strings.Repeat("a", MaxBodyBytes) + `"}`

	cases := []struct {
		name         string
		method, path string
		body         string
		status       int
		code         string
		field        string // details.field, when the error names one
		detail       string // another details key that must be present
	}{
		{"tenant id malformed", "POST", "/admin/tenants", `{"id":"no spaces"}`, 400, "invalid_request", "id", ""},
		{"tenant id missing", "POST", "/admin/tenants", `{}`, 400, "invalid_request", "id", ""},
		{"tenant id wrong type", "POST", "/admin/tenants", `{"id":42}`, 400, "invalid_request", "id", ""},
		{"unknown field", "POST", "/admin/tenants", `{"id":"x","status":"active"}`, 400, "invalid_request", "status", ""},
		{"syntax error", "POST", "/admin/tenants", `{"id" "x"}`, 400, "invalid_request", "", "offset"},
		{"truncated body", "POST", "/admin/tenants", `{"id":"x"`, 400, "invalid_request", "", "offset"},
		{"not JSON", "POST", "/admin/tenants", `id=x`, 400, "invalid_request", "", "offset"},
		{"empty body", "POST", "/admin/tenants", ``, 400, "invalid_request", "", ""},
		{"null body", "POST", "/admin/tenants", `null`, 400, "invalid_request", "", "offset"},
		{"array body", "POST", "/admin/tenants", `[{"id":"x"}]`, 400, "invalid_request", "", "offset"},
		{"trailing data", "POST", "/admin/tenants", `{"id":"x"} {"id":"y"}`, 400, "invalid_request", "", "offset"},
		{"oversize body", "POST", "/admin/tenants", oversize, 400, "request_too_large", "", "limit_bytes"},
		{"tenant exists", "POST", "/admin/tenants", `{"id":"acme"}`, 409, "tenant_already_exists", "", ""},

		{"list limit not a number", "GET", "/admin/tenants?limit=ten", "", 400, "invalid_request", "limit", ""},
		{"list limit zero", "GET", "/admin/tenants?limit=0", "", 400, "invalid_request", "limit", ""},
		{"list limit too big", "GET", "/admin/tenants?limit=5000", "", 400, "invalid_request", "limit", ""},
		{"list limit twice", "GET", "/admin/tenants?limit=1&limit=2", "", 400, "invalid_request", "limit", ""},
		{"list cursor forged", "GET", "/admin/tenants?cursor=nope", "", 400, "invalid_request", "cursor", ""},

		{"get malformed id", "GET", "/admin/tenants/no%20spaces", "", 400, "invalid_request", "id", ""},
		{"get unknown tenant", "GET", "/admin/tenants/nobody", "", 404, "tenant_not_found", "", ""},

		{"patch without status", "PATCH", "/admin/tenants/acme", `{}`, 400, "invalid_request", "status", ""},
		{"patch bad status", "PATCH", "/admin/tenants/acme", `{"status":"paused"}`, 400, "invalid_request", "status", ""},
		{"patch status wrong type", "PATCH", "/admin/tenants/acme", `{"status":true}`, 400, "invalid_request", "status", ""},
		{"patch unknown field", "PATCH", "/admin/tenants/acme", `{"status":"active","id":"x"}`, 400, "invalid_request", "id", ""},
		{"patch unknown tenant", "PATCH", "/admin/tenants/nobody", `{"status":"active"}`, 404, "tenant_not_found", "", ""},

		{"key without name", "POST", "/admin/tenants/acme/keys", `{}`, 400, "invalid_request", "name", ""},
		{"key name blank", "POST", "/admin/tenants/acme/keys", `{"name":"  "}`, 400, "invalid_request", "name", ""},
		{"key name with NUL", "POST", "/admin/tenants/acme/keys", `{"name":"a\u0000b"}`, 400, "invalid_request", "name", ""},
		{"key name too long", "POST", "/admin/tenants/acme/keys", `{"name":"` + strings.Repeat("n", 201) + `"}`, 400, "invalid_request", "name", ""},
		{"key of unknown tenant", "POST", "/admin/tenants/nobody/keys", `{"name":"ci"}`, 404, "tenant_not_found", "", ""},
		{"keys of unknown tenant", "GET", "/admin/tenants/nobody/keys", "", 404, "tenant_not_found", "", ""},
		{"keys bad limit", "GET", "/admin/tenants/acme/keys?limit=-1", "", 400, "invalid_request", "limit", ""},
		{"keys forged cursor", "GET", "/admin/tenants/acme/keys?cursor=dGVuYW50czphY21l", "", 400, "invalid_request", "cursor", ""},
		{"revoke malformed key id", "DELETE", "/admin/tenants/acme/keys/42", "", 400, "invalid_request", "key_id", ""},
		{"revoke missing key", "DELETE", "/admin/tenants/acme/keys/" + missingKey, "", 404, "api_key_not_found", "", ""},
		{"revoke key of unknown tenant", "DELETE", "/admin/tenants/nobody/keys/" + missingKey, "", 404, "tenant_not_found", "", ""},

		{"quarantine bad limit", "GET", "/admin/quarantine?limit=1.5", "", 400, "invalid_request", "limit", ""},
		{"quarantine forged cursor", "GET", "/admin/quarantine?cursor=eA", "", 400, "invalid_request", "cursor", ""},
		{"quarantine reason with NUL", "GET", "/admin/quarantine?reason=a%00b", "", 400, "invalid_request", "reason", ""},
		{"quarantine topic too long", "GET", "/admin/quarantine?topic=" + strings.Repeat("t", 300), "", 400, "invalid_request", "topic", ""},
		{"quarantine topic not UTF-8", "GET", "/admin/quarantine?topic=%FF", "", 400, "invalid_request", "topic", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.send(t, call{method: c.method, path: c.path, token: testAdminToken, body: c.body})
			if r.status != c.status || r.body["code"] != c.code || r.body["message"] == "" {
				t.Fatalf("= %d %s, want %d %s", r.status, r.raw, c.status, c.code)
			}
			details, _ := r.body["details"].(map[string]any)
			if c.field != "" && details["field"] != c.field {
				t.Errorf("details.field = %v, want %q: %s", details["field"], c.field, r.raw)
			}
			if c.detail != "" && details[c.detail] == nil {
				t.Errorf("details.%s missing: %s", c.detail, r.raw)
			}
		})
	}
}

func TestRoutingErrorsAreJSON(t *testing.T) {
	h := newHarness(t, testAdminToken)
	cases := []struct {
		method, path string
		status       int
		code         string
		allow        string
	}{
		{"GET", "/v1/nothing-here", 404, "not_found", ""},
		{"GET", "/nothing-here", 404, "not_found", ""},
		{"GET", "/admin/tenants/acme/keys/x/y", 404, "not_found", ""},
		{"DELETE", "/admin/tenants", 405, "method_not_allowed", "GET, HEAD, POST"},
		{"PUT", "/admin/tenants/acme", 405, "method_not_allowed", "GET, HEAD, PATCH"},
		{"POST", "/healthz", 405, "method_not_allowed", "GET, HEAD"},
	}
	for _, c := range cases {
		r := h.send(t, call{method: c.method, path: c.path, token: testAdminToken})
		if r.status != c.status || r.body["code"] != c.code || r.header.Get("Allow") != c.allow {
			t.Errorf("%s %s = %d %s (Allow %q), want %d %s (Allow %q)", c.method, c.path, r.status, r.raw, r.header.Get("Allow"), c.status, c.code, c.allow)
		}
	}
}

// assertNoSecret fails when text contains secret.
func assertNoSecret(t *testing.T, where, text, secret string) {
	t.Helper()
	if secret != "" && strings.Contains(text, secret) {
		t.Errorf("%s contains a secret (%.8s…)", where, secret)
	}
}
