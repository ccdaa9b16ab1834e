package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hubctl/hubctl/internal/ratelimit"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store/queue"
)

// seedPullEvents stores n JSON events of tenant matched to the pull
// subscription sub.
func seedPullEvents(t testing.TB, h *harness, tenant, sub string, n int) {
	t.Helper()
	_, err := h.store.Pool.Exec(context.Background(), `
		WITH ev AS (
		    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
		                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset, datacontenttype)
		    SELECT $1, gen_random_uuid(), 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.midaz.transaction.posted',
		           '2026-01-02T03:04:05Z', '{}', '{}', convert_to('{"n":' || g || '}', 'UTF8'), 't', 0, g, 'application/json'
		    FROM generate_series(1, $3) g
		    RETURNING seq)
		INSERT INTO pull_entries (subscription_id, event_seq) SELECT $2, seq FROM ev`, tenant, sub, n)
	if err != nil {
		t.Fatalf("seed pull events: %v", err)
	}
}

// pullFixture is acme with a pull and a webhook subscription, and globex
// with a pull subscription, each tenant with its own key.
type pullFixture struct {
	h                  *harness
	acmeKey, globexKey string
	feed, hook, globex string
}

func newPullFixture(t *testing.T, configure ...func(*Options)) *pullFixture {
	t.Helper()
	h := newHarness(t, testAdminToken, configure...)
	f := &pullFixture{h: h}
	_, f.acmeKey = h.tenantWithKey(t, "acme")
	_, f.globexKey = h.tenantWithKey(t, "globex")
	// The feeds want the seeded events, not the operational event of the
	// webhook's creation.
	feedBody := strings.Replace(pullBody, `["*"]`, `["transaction.*"]`, 1)
	f.feed = h.v1(t, http.StatusCreated, f.acmeKey, "POST", "/v1/subscriptions", feedBody).body["id"].(string)
	f.globex = h.v1(t, http.StatusCreated, f.globexKey, "POST", "/v1/subscriptions", feedBody).body["id"].(string)
	f.hook = h.v1(t, http.StatusCreated, f.acmeKey, "POST", "/v1/subscriptions", webhookBody(newReceiver(t, http.StatusNoContent))).body["id"].(string)
	return f
}

func eventsPath(sub string, query string) string {
	path := "/v1/events?subscription_id=" + url.QueryEscape(sub)
	if query != "" {
		path += "&" + query
	}
	return path
}

func itemSeqs(t *testing.T, r reply) []int64 {
	t.Helper()
	items, ok := r.body["items"].([]any)
	if !ok {
		t.Fatalf("no items in %s", r.raw)
	}
	seqs := make([]int64, len(items))
	for i, item := range items {
		seqs[i] = int64(item.(map[string]any)["seq"].(float64))
	}
	return seqs
}

func TestReadEventsPagesAndAcks(t *testing.T) {
	f := newPullFixture(t)
	seedPullEvents(t, f.h, "acme", f.feed, 5)

	first := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", eventsPath(f.feed, "limit=3"), "")
	seqs := itemSeqs(t, first)
	if len(seqs) != 3 || first.body["next_cursor"] != float64(seqs[2]) {
		t.Fatalf("first page %s", first.raw)
	}
	item := first.body["items"].([]any)[0].(map[string]any)
	for field, want := range map[string]any{"type": "transaction.posted", "ceType": "studio.lerian.midaz.transaction.posted",
		"source": "midaz", "tenantId": "acme", "schemaVersion": "1.0.0", "time": "2026-01-02T03:04:05Z",
		"payload": map[string]any{"n": float64(1)}} {
		if fmt.Sprint(item[field]) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", field, item[field], want)
		}
	}
	if _, ok := item["payloadEncoding"]; ok || item["ceId"] == "" || item["receivedAt"] == nil {
		t.Errorf("item %v", item)
	}

	// Reading was the ack: the next read continues, and its short page
	// ends with a null next_cursor.
	second := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", eventsPath(f.feed, ""), "")
	if rest := itemSeqs(t, second); len(rest) != 2 || rest[0] <= seqs[2] || second.body["next_cursor"] != nil {
		t.Errorf("second page %s", second.raw)
	}
	// after below the cursor re-reads without moving it.
	again := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", eventsPath(f.feed, fmt.Sprintf("after=%d&limit=2", seqs[0])), "")
	if got := itemSeqs(t, again); len(got) != 2 || got[0] != seqs[1] {
		t.Errorf("re-read %s", again.raw)
	}
	if empty := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", eventsPath(f.feed, ""), ""); empty.raw != `{"items":[],"next_cursor":null}`+"\n" {
		t.Errorf("read past the end: %s", empty.raw)
	}

	// The admin token reads a tenant's subscription through X-Tenant-Id.
	seedPullEvents(t, f.h, "acme", f.feed, 1)
	admin := f.h.must(t, http.StatusOK, call{method: "GET", path: eventsPath(f.feed, ""), token: testAdminToken, header: map[string]string{"X-Tenant-Id": "acme"}})
	if len(itemSeqs(t, admin)) != 1 {
		t.Errorf("admin read %s", admin.raw)
	}
}

func TestReadEventsRefusals(t *testing.T) {
	f := newPullFixture(t)
	cases := []struct {
		name, path   string
		status       int
		code, field  string
		withoutToken bool
	}{
		{"no subscription_id", "/v1/events", 400, "invalid_request", "subscription_id", false},
		{"empty subscription_id", "/v1/events?subscription_id=", 400, "invalid_request", "subscription_id", false},
		{"subscription_id twice", eventsPath(f.feed, "subscription_id="+f.feed), 400, "invalid_request", "subscription_id", false},
		{"limit 0", eventsPath(f.feed, "limit=0"), 400, "invalid_request", "limit", false},
		{"limit 1001", eventsPath(f.feed, "limit=1001"), 400, "invalid_request", "limit", false},
		{"limit not a number", eventsPath(f.feed, "limit=ten"), 400, "invalid_request", "limit", false},
		{"limit twice", eventsPath(f.feed, "limit=1&limit=1000"), 400, "invalid_request", "limit", false},
		{"negative after", eventsPath(f.feed, "after=-1"), 400, "invalid_request", "after", false},
		{"signed after", eventsPath(f.feed, "after=+1"), 400, "invalid_request", "after", false},
		{"after beyond int64", eventsPath(f.feed, "after=9223372036854775808"), 400, "invalid_request", "after", false},
		{"after not a number", eventsPath(f.feed, "after=1e3"), 400, "invalid_request", "after", false},
		{"another tenant's subscription", eventsPath(f.globex, ""), 404, "subscription_not_found", "", false},
		{"not a UUID", eventsPath("orders", ""), 404, "subscription_not_found", "", false},
		{"missing subscription", eventsPath("0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b", ""), 404, "subscription_not_found", "", false},
		{"push subscription", eventsPath(f.hook, ""), 409, "not_a_pull_subscription", "", false},
		{"no token", eventsPath(f.feed, ""), 401, "unauthorized", "", true},
	}
	for _, tc := range cases {
		c := call{method: "GET", path: tc.path, token: f.acmeKey}
		if tc.withoutToken {
			c.token = ""
		}
		r := f.h.send(t, c)
		details, _ := r.body["details"].(map[string]any)
		field, _ := details["field"].(string)
		if r.status != tc.status || r.body["code"] != tc.code || field != tc.field {
			t.Errorf("%s: %d %s, want %d %s on %q", tc.name, r.status, r.raw, tc.status, tc.code, tc.field)
		}
	}
	// The largest limit and after=0 are fine.
	f.h.v1(t, http.StatusOK, f.acmeKey, "GET", eventsPath(f.feed, "limit=1000&after=0"), "")
}

// fakeClock is a clock the rate limit tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestReadEventsRateLimitIsPerTenant(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	f := newPullFixture(t, func(o *Options) { o.PullLimiter = ratelimit.New(0.5, 3, clock.Now) })

	for range 3 {
		f.h.v1(t, http.StatusOK, f.acmeKey, "GET", eventsPath(f.feed, ""), "")
	}
	denied := f.h.v1(t, http.StatusTooManyRequests, f.acmeKey, "GET", eventsPath(f.feed, ""), "")
	// One token takes 2s at 0.5/s.
	if denied.body["code"] != "rate_limited" || denied.header.Get("Retry-After") != "2" {
		t.Errorf("past the burst: Retry-After %q, %s", denied.header.Get("Retry-After"), denied.raw)
	}
	// Even a bad request spends a token: the limit is on requests.
	f.h.v1(t, http.StatusTooManyRequests, f.acmeKey, "GET", "/v1/events", "")

	// Another tenant has a bucket of its own.
	for range 3 {
		f.h.v1(t, http.StatusOK, f.globexKey, "GET", eventsPath(f.globex, ""), "")
	}

	clock.Advance(1500 * time.Millisecond)
	if r := f.h.v1(t, http.StatusTooManyRequests, f.acmeKey, "GET", eventsPath(f.feed, ""), ""); r.header.Get("Retry-After") != "1" {
		t.Errorf("a quarter token short: Retry-After %q, want 1 (rounded up, at least 1)", r.header.Get("Retry-After"))
	}
	clock.Advance(500 * time.Millisecond)
	f.h.v1(t, http.StatusOK, f.acmeKey, "GET", eventsPath(f.feed, ""), "")
}

func TestReadEventsWhileDraining(t *testing.T) {
	f := newPullFixture(t)
	f.h.v1(t, http.StatusOK, f.acmeKey, "GET", eventsPath(f.feed, ""), "")
	f.h.server.Drain()
	r := f.h.v1(t, http.StatusServiceUnavailable, f.acmeKey, "GET", eventsPath(f.feed, ""), "")
	if r.body["code"] != "draining" || r.header.Get("Retry-After") != "5" {
		t.Errorf("draining: Retry-After %q, %s", r.header.Get("Retry-After"), r.raw)
	}
	// Liveness holds while draining; other routes still answer.
	f.h.must(t, http.StatusOK, call{method: "GET", path: "/healthz"})
	f.h.v1(t, http.StatusOK, f.acmeKey, "GET", "/v1/subscriptions/"+f.feed, "")
}

func TestReadEventsWithoutADatabase(t *testing.T) {
	// Authentication still reaches the real database; only the read meets
	// one that does not answer (nothing listens on port 1).
	pool, err := pgxpool.New(context.Background(), "postgres://hubctl@127.0.0.1:1/hubctl?connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	f := newPullFixture(t, func(o *Options) {
		o.ControlPlane.(*service.ControlPlane).Pull = service.NewPull(queue.New(pool))
	})

	r := f.h.v1(t, http.StatusServiceUnavailable, f.acmeKey, "GET", eventsPath(f.feed, ""), "")
	if r.body["code"] != "store_unavailable" || r.header.Get("Retry-After") != "5" {
		t.Errorf("database down: Retry-After %q, %s", r.header.Get("Retry-After"), r.raw)
	}
}
