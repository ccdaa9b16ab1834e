package api

import (
	"context"
	"net/http"
	"testing"
)

func TestRecoverAnswersByTheRules(t *testing.T) {
	f := newPullFixture(t)
	h := f.h
	_, err := h.store.Pool.Exec(context.Background(), `
		INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
		                    header_keys, header_values, payload, topic, kafka_partition, kafka_offset, received_at)
		VALUES ('acme', gen_random_uuid(), 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.midaz.transaction.posted',
		        '2026-01-02T03:04:05Z', '{}', '{}', '{}', 't', 0, 1, '2026-01-02T03:04:05Z')`)
	if err != nil {
		t.Fatal(err)
	}
	path := func(sub string) string { return "/v1/subscriptions/" + sub + "/recover" }
	cases := []struct {
		name, token, sub, body string
		status                 int
		code, field            string
	}{
		{"since missing", f.acmeKey, f.hook, `{}`, http.StatusBadRequest, CodeInvalidRequest, "since"},
		{"since not RFC 3339", f.acmeKey, f.hook, `{"since":"6h"}`, http.StatusBadRequest, CodeInvalidRequest, "since"},
		{"until before since", f.acmeKey, f.hook, `{"since":"2026-01-02T00:00:00Z","until":"2026-01-01T00:00:00Z"}`, http.StatusBadRequest, CodeInvalidRequest, "until"},
		{"unknown field", f.acmeKey, f.hook, `{"since":"2026-01-02T00:00:00Z","from":"x"}`, http.StatusBadRequest, CodeInvalidRequest, ""},
		{"not JSON", f.acmeKey, f.hook, `since=yesterday`, http.StatusBadRequest, CodeInvalidRequest, ""},
		{"another tenant's", f.globexKey, f.hook, `{"since":"2026-01-02T00:00:00Z"}`, http.StatusNotFound, "subscription_not_found", ""},
		{"a pull subscription", f.acmeKey, f.feed, `{"since":"2026-01-02T00:00:00Z"}`, http.StatusConflict, "not_a_push_subscription", ""},
	}
	for _, c := range cases {
		r := h.send(t, call{method: "POST", path: path(c.sub), token: c.token, body: c.body})
		if r.status != c.status || r.body["code"] != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.raw, c.status, c.code)
			continue
		}
		if c.field != "" {
			if details, _ := r.body["details"].(map[string]any); details["field"] != c.field {
				t.Errorf("%s: details %v, want field %s", c.name, r.body["details"], c.field)
			}
		}
	}

	window := `{"since":"2026-01-02T00:00:00Z","until":"2026-01-03T00:00:00Z"`
	dry := h.v1(t, http.StatusOK, f.acmeKey, "POST", path(f.hook), window+`,"dry_run":true}`)
	if dry.raw != `{"matched":1,"queued":0,"dry_run":true}`+"\n" {
		t.Errorf("dry run = %s", dry.raw)
	}
	h.v1(t, http.StatusOK, f.acmeKey, "POST", "/v1/subscriptions/"+f.hook+"/disable", "")
	if r := h.send(t, call{method: "POST", path: path(f.hook), token: f.acmeKey, body: window + `}`}); r.status != http.StatusConflict || r.body["code"] != "subscription_disabled" {
		t.Errorf("recover of a disabled subscription = %d %s, want 409 subscription_disabled", r.status, r.raw)
	}
	h.v1(t, http.StatusOK, f.acmeKey, "POST", "/v1/subscriptions/"+f.hook+"/enable", "")
	done := h.must(t, http.StatusOK, call{method: "POST", path: path(f.hook), token: testAdminToken, body: window + `}`,
		header: map[string]string{HeaderTenantID: "acme"}})
	if done.raw != `{"matched":1,"queued":1,"dry_run":false}`+"\n" {
		t.Errorf("recover by the admin = %s", done.raw)
	}
}
