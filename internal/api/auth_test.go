package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestAuthFailures(t *testing.T) {
	h := newHarness(t, testAdminToken)
	revokedID, revoked := h.tenantWithKey(t, "acme")
	h.admin(t, http.StatusOK, "DELETE", "/admin/tenants/acme/keys/"+revokedID, "")
	_, acmeKey := h.tenantWithKey(t, "acme2")
	_, dormantKey := h.tenantWithKey(t, "dormant")
	h.admin(t, http.StatusOK, "PATCH", "/admin/tenants/dormant", `{"status":"inactive"}`)

	const whoami = "/v1/test/whoami"
	cases := []struct {
		name          string
		path          string
		authorization string
		tenantHeader  string
		status        int
		code          string
		challenge     bool // a WWW-Authenticate header is expected
	}{
		{"admin without token", "/admin/tenants", "", "", 401, "unauthorized", true},
		{"admin with another scheme", "/admin/tenants", "Basic YWRtaW46eA==", "", 401, "unauthorized", true},
		{"admin with empty bearer", "/admin/tenants", "Bearer ", "", 401, "unauthorized", true},
		{"admin with a wrong token", "/admin/tenants", "Bearer not-the-admin-token", "", 401, "unauthorized", true},
		{"admin with a revoked key", "/admin/tenants", "Bearer " + revoked, "", 401, "unauthorized", true},
		{"admin with a tenant key", "/admin/tenants", "Bearer " + acmeKey, "", 403, "forbidden", false},
		{"admin with an inactive tenant's key", "/admin/tenants", "Bearer " + dormantKey, "", 403, "forbidden", false},

		{"v1 without token", whoami, "", "", 401, "unauthorized", true},
		{"v1 with garbage", whoami, "Bearer hub_garbage", "", 401, "unauthorized", true},
		{"v1 with a revoked key", whoami, "Bearer " + revoked, "", 401, "unauthorized", true},
		{"v1 with an inactive tenant's key", whoami, "Bearer " + dormantKey, "", 403, "forbidden", false},
		{"v1 key naming another tenant", whoami, "Bearer " + acmeKey, "dormant", 403, "forbidden", false},
		{"v1 admin without X-Tenant-Id", whoami, "Bearer " + testAdminToken, "", 400, "invalid_request", false},
		{"v1 admin with a malformed X-Tenant-Id", whoami, "Bearer " + testAdminToken, "no spaces", 400, "invalid_request", false},
		{"v1 admin with an unknown tenant", whoami, "Bearer " + testAdminToken, "nobody", 404, "tenant_not_found", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			header := map[string]string{}
			if c.authorization != "" {
				header["Authorization"] = c.authorization
			}
			if c.tenantHeader != "" {
				header[HeaderTenantID] = c.tenantHeader
			}
			r := h.send(t, call{method: "GET", path: c.path, header: header})
			if r.status != c.status || r.body["code"] != c.code {
				t.Fatalf("= %d %s, want %d %s", r.status, r.raw, c.status, c.code)
			}
			if got := r.header.Get("WWW-Authenticate"); (got != "") != c.challenge || (c.challenge && !strings.HasPrefix(got, "Bearer ")) {
				t.Errorf("WWW-Authenticate = %q, want one: %v", got, c.challenge)
			}
			if c.code == "invalid_request" {
				if details, _ := r.body["details"].(map[string]any); details["field"] != HeaderTenantID {
					t.Errorf("details = %v, want field %s", details, HeaderTenantID)
				}
			}
		})
	}
}

func TestTenantResolution(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, acmeKey := h.tenantWithKey(t, "acme")
	h.tenantWithKey(t, "dormant")
	h.admin(t, http.StatusOK, "PATCH", "/admin/tenants/dormant", `{"status":"inactive"}`)

	cases := []struct {
		name   string
		header map[string]string
		want   string
	}{
		{"tenant key", map[string]string{"Authorization": "Bearer " + acmeKey}, "acme"},
		{"tenant key, lower-case scheme", map[string]string{"Authorization": "bearer " + acmeKey}, "acme"},
		{"tenant key naming its own tenant", map[string]string{"Authorization": "Bearer " + acmeKey, HeaderTenantID: "acme"}, "acme"},
		{"admin token on a tenant", map[string]string{"Authorization": "Bearer " + testAdminToken, HeaderTenantID: "acme"}, "acme"},
		{"admin token on an inactive tenant", map[string]string{"Authorization": "Bearer " + testAdminToken, HeaderTenantID: "dormant"}, "dormant"},
	}
	for _, c := range cases {
		r := h.must(t, http.StatusOK, call{method: "GET", path: "/v1/test/whoami", header: c.header})
		if r.body["tenant"] != c.want {
			t.Errorf("%s: acts as %s, want %s", c.name, r.raw, c.want)
		}
	}
}

func TestAdminAPIDisabledWithoutAdminToken(t *testing.T) {
	h := newHarness(t, "")
	for _, token := range []string{"", testAdminToken, "anything"} {
		r := h.send(t, call{method: "GET", path: "/admin/tenants", token: token})
		if r.status != http.StatusForbidden || r.body["code"] != "forbidden" || !strings.Contains(r.body["message"].(string), "STREAMING_HUB_ADMIN_TOKEN") {
			t.Errorf("token %q: %d %s, want 403 forbidden naming STREAMING_HUB_ADMIN_TOKEN", token, r.status, r.raw)
		}
	}
	// Nor can an empty admin token stand in for one on /v1.
	r := h.send(t, call{method: "GET", path: "/v1/test/whoami", header: map[string]string{"Authorization": "Bearer ", HeaderTenantID: "acme"}})
	if r.status != http.StatusUnauthorized {
		t.Errorf("empty token on /v1 with the admin API disabled: %d %s", r.status, r.raw)
	}
}

// TestCrossTenant: nothing one tenant holds tells it anything about
// another. Keys are managed on /admin, which no tenant key may call, for
// its own tenant or any other; through the admin API, a key is only
// reachable under its own tenant.
func TestCrossTenant(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, acmeKey := h.tenantWithKey(t, "acme")
	globexKeyID, globexKey := h.tenantWithKey(t, "globex")

	if r := h.must(t, http.StatusOK, call{method: "GET", path: "/v1/test/whoami", token: acmeKey}); r.body["tenant"] != "acme" {
		t.Errorf("acme's key acts as %s", r.raw)
	}

	// Own tenant, other tenant, missing tenant: one and the same answer.
	var answers []string
	for _, c := range []call{
		{method: "GET", path: "/admin/tenants/acme/keys"},
		{method: "GET", path: "/admin/tenants/globex/keys"},
		{method: "GET", path: "/admin/tenants/nobody/keys"},
		{method: "DELETE", path: "/admin/tenants/globex/keys/" + globexKeyID},
		{method: "DELETE", path: "/admin/tenants/nobody/keys/" + globexKeyID},
	} {
		c.token = acmeKey
		r := h.send(t, c)
		answers = append(answers, r.raw)
		if r.status != http.StatusForbidden {
			t.Errorf("acme's key: %s %s = %d %s, want 403", c.method, c.path, r.status, r.raw)
		}
	}
	for _, a := range answers[1:] {
		if a != answers[0] {
			t.Errorf("answers differ between tenants: %q vs %q", a, answers[0])
		}
	}

	// Under the wrong tenant, globex's key is as missing as a made-up one.
	wrongTenant := h.admin(t, http.StatusNotFound, "DELETE", "/admin/tenants/acme/keys/"+globexKeyID, "")
	missing := h.admin(t, http.StatusNotFound, "DELETE", "/admin/tenants/acme/keys/0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b", "")
	if wrongTenant.body["code"] != "api_key_not_found" || missing.body["code"] != "api_key_not_found" {
		t.Errorf("another tenant's key: %s; a missing key: %s", wrongTenant.raw, missing.raw)
	}
	acmeKeys := h.admin(t, http.StatusOK, "GET", "/admin/tenants/acme/keys", "")
	if strings.Contains(acmeKeys.raw, globexKeyID) {
		t.Errorf("acme's keys list globex's: %s", acmeKeys.raw)
	}
	if r := h.must(t, http.StatusOK, call{method: "GET", path: "/v1/test/whoami", token: globexKey}); r.body["tenant"] != "globex" {
		t.Errorf("globex's key after the attempts on it: %s", r.raw)
	}
}

// TestLogsCarryNoSecrets runs requests carrying every kind of secret and a
// recognisable body, and checks the captured log has none of them while
// still recording each request.
func TestLogsCarryNoSecrets(t *testing.T) {
	h := newHarness(t, testAdminToken)
	const bodyMarker = "body-marker-7f3a"
	const queryMarker = "query-marker-91c2"
	h.admin(t, http.StatusCreated, "POST", "/admin/tenants", `{"id":"acme"}`)
	key := h.admin(t, http.StatusCreated, "POST", "/admin/tenants/acme/keys", `{"name":"`+bodyMarker+`"}`)
	token := key.body["key"].(string)
	h.must(t, http.StatusOK, call{method: "GET", path: "/v1/test/whoami", token: token})
	h.must(t, http.StatusUnauthorized, call{method: "GET", path: "/v1/test/whoami", token: token + "x"})
	h.must(t, http.StatusForbidden, call{method: "GET", path: "/admin/tenants", token: token})
	h.must(t, http.StatusBadRequest, call{method: "GET", path: "/admin/tenants?cursor=" + queryMarker, token: testAdminToken})
	h.must(t, http.StatusBadRequest, call{method: "POST", path: "/admin/tenants", token: testAdminToken, body: `{"id":"` + bodyMarker + ` x"}`})
	h.must(t, http.StatusOK, call{method: "GET", path: "/v1/test/whoami", token: testAdminToken, header: map[string]string{HeaderTenantID: "acme"}})

	h.stop()
	logs := h.logs.String()
	for name, secret := range map[string]string{"admin token": testAdminToken, "API key": token, "body": bodyMarker, "query": queryMarker} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log contains the %s", name)
		}
	}
	lines := 0
	for line := range strings.Lines(logs) {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("log line is not JSON: %v", err)
		}
		if entry["msg"] != "http request" {
			continue
		}
		lines++
		if entry["request_id"] == "" || entry["status"] == nil || entry["method"] == nil {
			t.Errorf("access log line lacks fields: %s", line)
		}
		if entry["pattern"] == "GET /v1/test/whoami" && entry["status"] == float64(200) && entry["tenant"] != "acme" {
			t.Errorf("access log of a tenant request lacks its tenant: %s", line)
		}
	}
	if lines != 8 {
		t.Errorf("%d access log lines for 8 requests:\n%s", lines, logs)
	}
}

func TestRequestIDs(t *testing.T) {
	h := newHarness(t, testAdminToken)
	kept := h.must(t, http.StatusOK, call{method: "GET", path: "/healthz", header: map[string]string{HeaderRequestID: "trace-42.a:b_c"}})
	if got := kept.header.Get(HeaderRequestID); got != "trace-42.a:b_c" {
		t.Errorf("a sane incoming id was replaced by %q", got)
	}
	replaced := h.must(t, http.StatusOK, call{method: "GET", path: "/healthz", header: map[string]string{HeaderRequestID: "bad id\tinjected"}})
	generated := h.must(t, http.StatusOK, call{method: "GET", path: "/healthz"})
	for _, r := range []reply{replaced, generated} {
		if id := r.header.Get(HeaderRequestID); !saneRequestID(id) || strings.Contains(id, "injected") {
			t.Errorf("generated request id %q", id)
		}
	}
	if replaced.header.Get(HeaderRequestID) == generated.header.Get(HeaderRequestID) {
		t.Error("two requests got the same generated id")
	}
}

func TestPanicsAnswer500WithoutDetails(t *testing.T) {
	h := newHarness(t, testAdminToken)
	r := h.must(t, http.StatusInternalServerError, call{method: "GET", path: "/test/panic"})
	if r.body["code"] != "internal" || strings.Contains(r.raw, "boom") || strings.Contains(r.raw, "goroutine") {
		t.Errorf("panic answer: %s", r.raw)
	}
	h.must(t, http.StatusOK, call{method: "GET", path: "/healthz"}) // the server lives on
	h.stop()
	logs := h.logs.String()
	if !strings.Contains(logs, "boom: the handler broke") || !strings.Contains(logs, "goroutine") {
		t.Errorf("the panic and its stack are not logged:\n%s", logs)
	}
}
