package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// seedDeliveries stores one event of tenant per state and a delivery of it
// to sub, oldest first, and two attempts of the first; it returns the
// delivery ids in the order given.
func seedDeliveries(t *testing.T, h *harness, tenant, sub string, states ...string) []string {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ids := make([]string, len(states))
	for i, state := range states {
		ids[i] = uuid.Must(uuid.NewV7()).String()
		_, err := h.store.Pool.Exec(ctx, `
			WITH ev AS (
			    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
			                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
			    VALUES ($1, gen_random_uuid(), 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.transaction.posted',
			            $2, '{}', '{}', '{}', 't', 0, 0)
			    RETURNING seq)
			INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, next_attempt_at, lease_until, dead_reason, dead_at)
			SELECT $3, $1, $4, seq, $5, $2, CASE WHEN $5 = 'in_flight' THEN $2::timestamptz END,
			       CASE WHEN $5 = 'dead' THEN 'exhausted' END, CASE WHEN $5 = 'dead' THEN $2::timestamptz END
			FROM ev`, tenant, at, ids[i], sub, state)
		if err != nil {
			t.Fatalf("seed delivery: %v", err)
		}
	}
	_, err := h.store.Pool.Exec(ctx, `
		INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet)
		VALUES (gen_random_uuid(), $1, 2, $2, 40, 'failed', NULL, 'dial tcp: connection refused', NULL),
		       (gen_random_uuid(), $1, 1, $2, 250, 'failed', 500, 'HTTP 500', 'oops')`, ids[0], at)
	if err != nil {
		t.Fatalf("seed attempts: %v", err)
	}
	return ids
}

// deliveriesFixture is acme with a webhook subscription and deliveries in
// the given states, and a second tenant, globex, with its own key.
type deliveriesFixture struct {
	h                   *harness
	acmeKey, globexKey  string
	sub                 string
	deliveries          []string
	deliveriesPath      string
	globexSub, globexID string
}

func newDeliveriesFixture(t *testing.T, states ...string) *deliveriesFixture {
	t.Helper()
	h := newHarness(t, testAdminToken)
	f := &deliveriesFixture{h: h}
	_, f.acmeKey = h.tenantWithKey(t, "acme")
	_, f.globexKey = h.tenantWithKey(t, "globex")
	rcv := newReceiver(t, http.StatusNoContent)
	f.sub = h.v1(t, http.StatusCreated, f.acmeKey, "POST", "/v1/subscriptions", webhookBody(rcv)).body["id"].(string)
	f.globexSub = h.v1(t, http.StatusCreated, f.globexKey, "POST", "/v1/subscriptions", webhookBody(rcv)).body["id"].(string)
	f.deliveries = seedDeliveries(t, h, "acme", f.sub, states...)
	f.globexID = seedDeliveries(t, h, "globex", f.globexSub, "pending")[0]
	f.deliveriesPath = "/v1/subscriptions/" + f.sub + "/deliveries"
	return f
}

func itemIDs(t *testing.T, r reply) []string {
	t.Helper()
	items, ok := r.body["items"].([]any)
	if !ok {
		t.Fatalf("no items in %s", r.raw)
	}
	ids := make([]string, len(items))
	for i, item := range items {
		ids[i] = item.(map[string]any)["id"].(string)
	}
	return ids
}

func TestListDeliveriesPagesNewestFirst(t *testing.T) {
	f := newDeliveriesFixture(t, "succeeded", "dead", "pending", "dead", "in_flight")
	var got []string
	path := f.deliveriesPath + "?limit=2"
	for range 5 {
		r := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", path, "")
		got = append(got, itemIDs(t, r)...)
		next, _ := r.body["next_cursor"].(string)
		if next == "" {
			break
		}
		path = f.deliveriesPath + "?limit=2&cursor=" + url.QueryEscape(next)
	}
	d := f.deliveries
	if want := []string{d[4], d[3], d[2], d[1], d[0]}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("listed %v, want %v", got, want)
	}

	dead := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", f.deliveriesPath+"?state=dead", "")
	if ids := itemIDs(t, dead); strings.Join(ids, " ") != d[3]+" "+d[1] || dead.body["next_cursor"] != nil {
		t.Errorf("dead deliveries %s", dead.raw)
	}
	item := dead.body["items"].([]any)[0].(map[string]any)
	for field, want := range map[string]any{"subscription_id": f.sub, "tenant_id": "acme", "state": "dead", "dead_reason": "exhausted",
		"event_type": "transaction.posted", "attempts": float64(0), "next_attempt_at": nil, "last_status": nil} {
		if item[field] != want {
			t.Errorf("%s = %v, want %v", field, item[field], want)
		}
	}

	// The window is on when each delivery was created: seeding created
	// them all now.
	hourAgo := url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339))
	if since := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", f.deliveriesPath+"?state=dead&since="+hourAgo, ""); strings.Join(itemIDs(t, since), " ") != d[3]+" "+d[1] {
		t.Errorf("dead deliveries since an hour ago %s", since.raw)
	}
	if until := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", f.deliveriesPath+"?until="+hourAgo, ""); len(itemIDs(t, until)) != 0 {
		t.Errorf("deliveries until an hour ago %s", until.raw)
	}

	// The admin token reaches the same listing through X-Tenant-Id.
	admin := f.h.must(t, http.StatusOK, call{method: "GET", path: f.deliveriesPath, token: testAdminToken, header: map[string]string{"X-Tenant-Id": "acme"}})
	if len(itemIDs(t, admin)) != 5 {
		t.Errorf("admin listing %s", admin.raw)
	}
}

func TestListDeliveriesRejectsBadQueries(t *testing.T) {
	f := newDeliveriesFixture(t, "pending")
	cases := []struct {
		query, field string
	}{
		{"?state=lost", "state"},
		{"?state=dead&state=pending", "state"},
		{"?limit=0", "limit"},
		{"?limit=1001", "limit"},
		{"?cursor=forged", "cursor"},
		{"?since=yesterday", "since"},
		{"?since=1h", "since"},
		{"?until=2026-01-02", "until"},
		{"?since=2026-01-02T00:00:00Z&until=2026-01-02T00:00:00Z", "until"},
		{"?since=2026-01-02T00:00:00Z&since=2026-01-03T00:00:00Z", "since"},
	}
	for _, tc := range cases {
		r := f.h.v1(t, http.StatusBadRequest, f.acmeKey, "GET", f.deliveriesPath+tc.query, "")
		details, _ := r.body["details"].(map[string]any)
		if r.body["code"] != "invalid_request" || details["field"] != tc.field {
			t.Errorf("%s: %s, want invalid_request on %s", tc.query, r.raw, tc.field)
		}
	}
}

func TestGetDeliveryShowsItsAttemptsInOrder(t *testing.T) {
	f := newDeliveriesFixture(t, "pending", "succeeded")
	r := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", "/v1/deliveries/"+f.deliveries[0], "")
	if r.body["id"] != f.deliveries[0] || r.body["state"] != "pending" || r.body["next_attempt_at"] != "2026-01-02T03:04:05Z" {
		t.Errorf("delivery %s", r.raw)
	}
	history, _ := r.body["attempt_history"].([]any)
	if len(history) != 2 {
		t.Fatalf("attempt history %s", r.raw)
	}
	first, second := history[0].(map[string]any), history[1].(map[string]any)
	if first["attempt"] != float64(1) || first["status_code"] != float64(500) || first["response"] != "oops" || first["duration_ms"] != float64(250) {
		t.Errorf("first attempt %v", first)
	}
	if second["attempt"] != float64(2) || second["status_code"] != nil || second["response"] != nil || second["error"] != "dial tcp: connection refused" {
		t.Errorf("second attempt %v", second)
	}
	if _, encoded := first["response_encoding"]; encoded {
		t.Errorf("text response marked as encoded: %v", first)
	}

	empty := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", "/v1/deliveries/"+f.deliveries[1], "")
	if h, ok := empty.body["attempt_history"].([]any); !ok || len(h) != 0 {
		t.Errorf("a delivery without attempts must show an empty history: %s", empty.raw)
	}
}

// TestDeliveriesOfAnotherTenantAnswerLikeMissingOnes checks that nothing
// in an answer tells another tenant's resource from one that does not
// exist: the status, the code and the message (the id aside) are the same.
func TestDeliveriesOfAnotherTenantAnswerLikeMissingOnes(t *testing.T) {
	f := newDeliveriesFixture(t, "pending")
	missing := uuid.Must(uuid.NewV7()).String()
	cases := []struct {
		name                 string
		foreignPath, absPath string
		foreignID, absID     string
		code                 string
	}{
		{"subscription", "/v1/subscriptions/" + f.globexSub + "/deliveries", "/v1/subscriptions/" + missing + "/deliveries",
			f.globexSub, missing, "subscription_not_found"},
		{"delivery", "/v1/deliveries/" + f.globexID, "/v1/deliveries/" + missing, f.globexID, missing, "delivery_not_found"},
		{"subscription id that is not a UUID", "/v1/subscriptions/orders/deliveries", "/v1/subscriptions/" + missing + "/deliveries",
			"orders", missing, "subscription_not_found"},
		{"delivery id that is not a UUID", "/v1/deliveries/42", "/v1/deliveries/" + missing, "42", missing, "delivery_not_found"},
	}
	for _, tc := range cases {
		foreign := f.h.v1(t, http.StatusNotFound, f.acmeKey, "GET", tc.foreignPath, "")
		absent := f.h.v1(t, http.StatusNotFound, f.acmeKey, "GET", tc.absPath, "")
		if foreign.body["code"] != tc.code {
			t.Errorf("%s: %s, want %s", tc.name, foreign.raw, tc.code)
		}
		if a, b := strings.ReplaceAll(foreign.raw, tc.foreignID, "ID"), strings.ReplaceAll(absent.raw, tc.absID, "ID"); a != b {
			t.Errorf("%s: another tenant's answer differs from a missing one's:\n %s\n %s", tc.name, a, b)
		}
	}
	// Its owner sees it.
	f.h.v1(t, http.StatusOK, f.globexKey, "GET", "/v1/deliveries/"+f.globexID, "")
	f.h.v1(t, http.StatusOK, f.globexKey, "GET", fmt.Sprintf("/v1/subscriptions/%s/deliveries", f.globexSub), "")
}

func TestCountDeliveries(t *testing.T) {
	f := newDeliveriesFixture(t, "succeeded", "dead", "pending")
	r := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", "/v1/delivery-counts?subscription_ids="+f.sub, "")
	items, _ := r.body["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("counts %s", r.raw)
	}
	// Seeding created every delivery now; the pending one was never tried.
	for field, want := range map[string]any{"subscription_id": f.sub, "delivered": float64(1), "failed": float64(0), "dead": float64(1), "sampled": false} {
		if got := items[0].(map[string]any)[field]; got != want {
			t.Errorf("%s = %v, want %v", field, got, want)
		}
	}
	for _, tc := range []struct {
		query  string
		status int
		code   string
	}{
		{"", http.StatusBadRequest, "invalid_request"},
		{"?subscription_ids=", http.StatusBadRequest, "invalid_request"},
		{"?subscription_ids=" + f.sub + "&subscription_ids=" + f.sub, http.StatusBadRequest, "invalid_request"},
		{"?subscription_ids=" + f.sub + "," + f.globexSub, http.StatusNotFound, "subscription_not_found"},
		{"?subscription_ids=orders", http.StatusNotFound, "subscription_not_found"},
	} {
		r := f.h.v1(t, tc.status, f.acmeKey, "GET", "/v1/delivery-counts"+tc.query, "")
		if r.body["code"] != tc.code {
			t.Errorf("%q: %s, want %s", tc.query, r.raw, tc.code)
		}
	}
}

func TestAttemptLatency(t *testing.T) {
	f := newDeliveriesFixture(t, "succeeded")
	r := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", "/v1/subscriptions/"+f.sub+"/latency", "")
	if hours, _ := r.body["hours"].([]any); len(hours) != 24 || r.body["sampled"] != false {
		t.Errorf("latency %s", r.raw)
	}
	for _, path := range []string{"/v1/subscriptions/" + f.globexSub + "/latency", "/v1/subscriptions/orders/latency"} {
		if r := f.h.v1(t, http.StatusNotFound, f.acmeKey, "GET", path, ""); r.body["code"] != "subscription_not_found" {
			t.Errorf("%s: %s", path, r.raw)
		}
	}
}
