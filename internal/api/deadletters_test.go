package api

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestDeadLettersListAndReplayOverHTTP(t *testing.T) {
	f := newDeliveriesFixture(t, "dead", "pending", "dead")
	globexDead := seedDeliveries(t, f.h, "globex", f.globexSub, "dead")[0]
	d := f.deliveries

	list := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", "/v1/dead-letters?limit=1&reason=exhausted&subscription_id="+f.sub, "")
	next, _ := list.body["next_cursor"].(string)
	if next == "" {
		t.Fatalf("first page of two has no next_cursor: %s", list.raw)
	}
	second := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", "/v1/dead-letters?limit=1&reason=exhausted&subscription_id="+f.sub+"&cursor="+url.QueryEscape(next), "")
	got := append(itemIDs(t, list), itemIDs(t, second)...)
	// Both died at the same instant: the id orders them.
	if want := d[0] + " " + d[2]; strings.Join(got, " ") != want {
		t.Errorf("listed %v, want %s", got, want)
	}
	item := list.body["items"].([]any)[0].(map[string]any)
	keys := make([]string, 0, len(item))
	for k := range item {
		keys = append(keys, k)
	}
	for _, k := range []string{"id", "subscription_id", "event_id", "event_type", "reason", "attempts", "last_error", "last_status", "dead_at"} {
		if _, ok := item[k]; !ok {
			t.Errorf("dead letter lacks %q: %v", k, item)
		}
	}
	if len(item) != 9 {
		t.Errorf("dead letter has fields %v; want exactly the nine of docs/api.md", keys)
	}

	dry := f.h.v1(t, http.StatusOK, f.acmeKey, "POST", "/v1/dead-letters/replay", `{"dry_run": true}`)
	if strings.TrimSpace(dry.raw) != `{"matched":2,"replayed":0,"dry_run":true}` {
		t.Errorf("dry run answered %s", dry.raw)
	}
	// globex's dead letter is named but not acme's to replay.
	done := f.h.v1(t, http.StatusOK, f.acmeKey, "POST", "/v1/dead-letters/replay", `{"ids": ["`+d[0]+`", "`+globexDead+`"]}`)
	if strings.TrimSpace(done.raw) != `{"matched":1,"replayed":1,"dry_run":false}` {
		t.Errorf("replay answered %s", done.raw)
	}
	after := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", "/v1/deliveries/"+d[0], "")
	if after.body["state"] != "pending" || after.body["dead_reason"] != nil {
		t.Errorf("replayed delivery %s", after.raw)
	}
	globex := f.h.v1(t, http.StatusOK, f.globexKey, "GET", "/v1/dead-letters", "")
	if ids := itemIDs(t, globex); len(ids) != 1 || ids[0] != globexDead {
		t.Errorf("globex's dead letters after acme's replay: %s", globex.raw)
	}
}

func TestDeadLettersRejectBadInput(t *testing.T) {
	f := newDeliveriesFixture(t, "dead")
	cases := []struct {
		method, path, body, field string
	}{
		{"GET", "/v1/dead-letters?reason=lost", "", "reason"},
		{"GET", "/v1/dead-letters?since=yesterday", "", "since"},
		{"GET", "/v1/dead-letters?until=2026-01-01T00:00:00Z&until=2026-01-02T00:00:00Z", "", "until"},
		{"GET", "/v1/dead-letters?subscription_id=orders", "", "subscription_id"},
		{"GET", "/v1/dead-letters?cursor=forged", "", "cursor"},
		{"POST", "/v1/dead-letters/replay", `{"ids": ["42"]}`, "ids"},
		{"POST", "/v1/dead-letters/replay", `{"reason": "expired"}`, "reason"},
	}
	for _, tc := range cases {
		r := f.h.v1(t, http.StatusBadRequest, f.acmeKey, tc.method, tc.path, tc.body)
		details, _ := r.body["details"].(map[string]any)
		if r.body["code"] != "invalid_request" || details["field"] != tc.field {
			t.Errorf("%s %s %s: %s, want invalid_request on %s", tc.method, tc.path, tc.body, r.raw, tc.field)
		}
	}
	for _, body := range []string{`{"idz": []}`, `not json`, `{"dry_run": "yes"}`} {
		r := f.h.v1(t, http.StatusBadRequest, f.acmeKey, "POST", "/v1/dead-letters/replay", body)
		if r.body["code"] == nil {
			t.Errorf("%s: %s", body, r.raw)
		}
	}
}
