package service_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestDeliveryInputIsCheckedBeforeTheDatabase(t *testing.T) {
	// No store: every case must be answered without one.
	svc := service.NewDeliveries(nil)
	ctx := context.Background()
	validSub := uuid.Must(uuid.NewV7()).String()
	otherListing := listCursorOf(t)
	list := func(tenant, sub string, p hubapi.DeliveryListParams) func() error {
		return func() error { _, err := svc.List(ctx, tenant, sub, p); return err }
	}
	count := func(tenant string, subs []string) func() error {
		return func() error { _, err := svc.Count(ctx, tenant, subs); return err }
	}
	cases := []struct {
		name      string
		call      func() error
		wantCode  string
		wantField string
	}{
		{"limit too large", list("acme", validSub, hubapi.DeliveryListParams{ListParams: hubapi.ListParams{Limit: hubapi.MaxPageLimit + 1}}), hubapi.CodeInvalidRequest, "limit"},
		{"unknown state", list("acme", validSub, hubapi.DeliveryListParams{State: "lost"}), hubapi.CodeInvalidRequest, "state"},
		{"state in the wrong case", list("acme", validSub, hubapi.DeliveryListParams{State: "DEAD"}), hubapi.CodeInvalidRequest, "state"},
		{"forged cursor", list("acme", validSub, hubapi.DeliveryListParams{ListParams: hubapi.ListParams{Cursor: "not-a-cursor!"}}), hubapi.CodeInvalidRequest, "cursor"},
		{"another listing's cursor", list("acme", validSub, hubapi.DeliveryListParams{ListParams: hubapi.ListParams{Cursor: otherListing}}), hubapi.CodeInvalidRequest, "cursor"},
		{"cursor at seq 0", list("acme", validSub, hubapi.DeliveryListParams{ListParams: hubapi.ListParams{Cursor: encodeTestCursor("deliveries:0")}}), hubapi.CodeInvalidRequest, "cursor"},
		{"since that is not RFC 3339", list("acme", validSub, hubapi.DeliveryListParams{Since: "1h"}), hubapi.CodeInvalidRequest, "since"},
		{"until that is not RFC 3339", list("acme", validSub, hubapi.DeliveryListParams{Until: "2026-12-01"}), hubapi.CodeInvalidRequest, "until"},
		{"empty window", list("acme", validSub, hubapi.DeliveryListParams{Since: "2026-12-01T00:00:00Z", Until: "2026-12-01T00:00:00Z"}), hubapi.CodeInvalidRequest, "until"},
		{"window backwards", list("acme", validSub, hubapi.DeliveryListParams{Since: "2026-12-02T00:00:00Z", Until: "2026-12-01T00:00:00Z"}), hubapi.CodeInvalidRequest, "until"},
		{"count of no subscription", count("acme", nil), hubapi.CodeInvalidRequest, "subscription_ids"},
		{"count of too many subscriptions", count("acme", slices.Repeat([]string{validSub}, hubapi.MaxDeliveryCountsSubscriptions+1)), hubapi.CodeInvalidRequest, "subscription_ids"},
		{"count of a subscription named twice", count("acme", []string{validSub, validSub}), hubapi.CodeInvalidRequest, "subscription_ids"},
		{"count of a subscription id that is not a UUID", count("acme", []string{validSub, "orders"}), service.CodeSubscriptionNotFound, ""},
		{"count in a tenant id no tenant can have", count("a/b", []string{validSub}), service.CodeSubscriptionNotFound, ""},
		{"subscription id that is not a UUID", list("acme", "orders", hubapi.DeliveryListParams{}), service.CodeSubscriptionNotFound, ""},
		{"tenant id no tenant can have", list("a/b", validSub, hubapi.DeliveryListParams{}), service.CodeSubscriptionNotFound, ""},
		{"delivery id that is not a UUID", func() error { _, err := svc.Get(ctx, "acme", "42"); return err }, service.CodeDeliveryNotFound, ""},
		{"delivery of an impossible tenant", func() error { _, err := svc.Get(ctx, "", validSub); return err }, service.CodeDeliveryNotFound, ""},
	}
	for _, tc := range cases {
		code, field := codeOf(tc.call())
		if code != tc.wantCode || field != tc.wantField {
			t.Errorf("%s: code %q field %q, want %q %q", tc.name, code, field, tc.wantCode, tc.wantField)
		}
	}
}

// listCursorOf returns a real cursor of the tenant listing.
func listCursorOf(t *testing.T) string {
	t.Helper()
	st := openStore(t)
	svc := service.NewTenants(st.Catalog, st.Lifecycle, newClock().Now)
	for _, id := range []string{"a", "b"} {
		if _, err := svc.Create(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	page, err := svc.List(context.Background(), hubapi.ListParams{Limit: 1})
	if err != nil || page.NextCursor == nil {
		t.Fatalf("tenant page: %+v, %v", page, err)
	}
	return *page.NextCursor
}

// deliveryFixture is a subscription of acme with deliveries in every state.
type deliveryFixture struct {
	st   *storetest.Store
	svc  *service.Deliveries
	sub  string
	jobs map[string]string // state -> job id
}

var fixtureTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newDeliveryFixture(t *testing.T) *deliveryFixture {
	t.Helper()
	st := openStore(t)
	ctx := context.Background()
	f := &deliveryFixture{st: st, svc: service.NewDeliveries(st.Catalog), sub: uuid.Must(uuid.NewV7()).String(), jobs: map[string]string{}}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := st.Pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", strings.Fields(sql)[0:3], err)
		}
	}
	exec(`INSERT INTO tenants (id) VALUES ('acme'), ('globex')`)
	exec(`INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state, signing_secret)
		VALUES ($1, 'acme', 'hook', 'webhook', 'https://hooks.test:443', '{*}', 'active', 'sealed')`, f.sub)
	for n, state := range hubapi.DeliveryStates {
		job := uuid.Must(uuid.NewV7()).String()
		f.jobs[state] = job
		exec(`WITH ev AS (
			INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
			                    header_keys, header_values, payload, topic, kafka_partition, kafka_offset, received_at)
			VALUES ('acme', $1, 'account.created', '1.0.0', 1, 'midaz', 'studio.lerian.account.created', $2, '{}', '{}', '{}', 't', 0, $3, $2)
			RETURNING seq)
			INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, attempts, next_attempt_at, lease_until,
			                           dead_reason, dead_at, succeeded_at, last_status, created_at, updated_at)
			SELECT $4, 'acme', $5, seq, $6, 1, $2, CASE WHEN $6 = 'in_flight' THEN $2::timestamptz END,
			       CASE WHEN $6 = 'dead' THEN 'poison' END, CASE WHEN $6 = 'dead' THEN $2::timestamptz END,
			       CASE WHEN $6 = 'succeeded' THEN $2::timestamptz END, CASE WHEN $6 = 'succeeded' THEN 204 END, $2, $2
			FROM ev`,
			fmt.Sprintf("0190b6a2-7c1e-7d3a-9f00-%012x", n), fixtureTime, n, job, f.sub, state)
	}
	exec(`INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet)
		VALUES ($1, $3, 1, $4, 1500, 'failed', 503, 'HTTP 503', '\xfffe'::bytea),
		       ($2, $3, 2, $4, 7, 'succeeded', 204, NULL, convert_to('thanks, ✓', 'UTF8'))`,
		uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7()), f.jobs[hubapi.DeliverySucceeded], fixtureTime)
	return f
}

func TestListDeliveriesFollowsCursorsNewestFirst(t *testing.T) {
	f := newDeliveryFixture(t)
	ctx := context.Background()
	var states []string
	params := hubapi.DeliveryListParams{ListParams: hubapi.ListParams{Limit: 2}}
	for range 10 {
		page, err := f.svc.List(ctx, "acme", f.sub, params)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page.Items {
			states = append(states, d.State)
		}
		if page.NextCursor == nil {
			break
		}
		params.Cursor = *page.NextCursor
	}
	if got, want := strings.Join(states, ","), "canceled,dead,succeeded,in_flight,pending"; got != want {
		t.Errorf("states in listing order %s, want %s", got, want)
	}

	page, err := f.svc.List(ctx, "acme", f.sub, hubapi.DeliveryListParams{State: hubapi.DeliveryDead})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != f.jobs[hubapi.DeliveryDead] || page.NextCursor != nil {
		t.Errorf("dead only: %+v, %v", page, err)
	}
	if _, err := f.svc.List(ctx, "globex", f.sub, hubapi.DeliveryListParams{}); !isCode(err, service.CodeSubscriptionNotFound) {
		t.Errorf("another tenant's subscription: %v", err)
	}
}

func TestListDeliveriesInATimeWindow(t *testing.T) {
	f := newDeliveryFixture(t)
	ctx := context.Background()
	at := func(d time.Duration) string { return fixtureTime.Add(d).Format(time.RFC3339Nano) }
	cases := []struct {
		name  string
		p     hubapi.DeliveryListParams
		wantN int
	}{
		{"since their creation", hubapi.DeliveryListParams{Since: at(0)}, len(hubapi.DeliveryStates)},
		{"until their creation", hubapi.DeliveryListParams{Until: at(0)}, 0},
		{"a window around it", hubapi.DeliveryListParams{Since: at(-time.Second), Until: at(time.Second)}, len(hubapi.DeliveryStates)},
		{"after it", hubapi.DeliveryListParams{Since: at(time.Second)}, 0},
		{"dead in the window", hubapi.DeliveryListParams{State: hubapi.DeliveryDead, Since: at(0), Until: at(time.Hour)}, 1},
	}
	for _, tc := range cases {
		page, err := f.svc.List(ctx, "acme", f.sub, tc.p)
		if err != nil || len(page.Items) != tc.wantN {
			t.Errorf("%s: %d deliveries, %v; want %d", tc.name, len(page.Items), err, tc.wantN)
		}
	}
	if _, err := f.svc.List(ctx, "globex", f.sub, hubapi.DeliveryListParams{Since: at(0)}); !isCode(err, service.CodeSubscriptionNotFound) {
		t.Errorf("another tenant's subscription in a window: %v", err)
	}
}

func isCode(err error, code string) bool {
	got, _ := codeOf(err)
	return got == code
}

func TestDeliveryViewShowsOnlyWhatAppliesToItsState(t *testing.T) {
	f := newDeliveryFixture(t)
	ctx := context.Background()
	at := fixtureTime.Format(time.RFC3339Nano)
	cases := []struct {
		state string
		want  []string // fragments of the JSON view
	}{
		{hubapi.DeliveryPending, []string{`"next_attempt_at":"` + at + `"`, `"dead_reason":null`, `"succeeded_at":null`, `"attempt_history":[]`}},
		{hubapi.DeliveryInFlight, []string{`"next_attempt_at":null`, `"last_status":null`}},
		{hubapi.DeliveryDead, []string{`"next_attempt_at":null`, `"dead_reason":"poison"`, `"dead_at":"` + at + `"`}},
		{hubapi.DeliverySucceeded, []string{`"next_attempt_at":null`, `"last_status":204`, `"succeeded_at":"` + at + `"`, `"last_error":null`,
			`"event_id":"0190b6a2-7c1e-7d3a-9f00-000000000002"`, `"event_type":"account.created"`, `"tenant_id":"acme"`,
			`"attempt":1,"started_at":"` + at + `","duration_ms":1500,"outcome":"failed","status_code":503,"error":"HTTP 503","response":"//4=","response_encoding":"base64"}`,
			`"attempt":2,"started_at":"` + at + `","duration_ms":7,"outcome":"succeeded","status_code":204,"error":null,"response":"thanks, ✓"}`}},
	}
	for _, tc := range cases {
		detail, err := f.svc.Get(ctx, "acme", f.jobs[tc.state])
		if err != nil {
			t.Fatalf("%s: %v", tc.state, err)
		}
		raw, err := json.Marshal(detail)
		if err != nil {
			t.Fatal(err)
		}
		for _, fragment := range tc.want {
			if !strings.Contains(string(raw), fragment) {
				t.Errorf("%s: view lacks %s:\n%s", tc.state, fragment, raw)
			}
		}
		if detail.SubscriptionID != f.sub || detail.ID != f.jobs[tc.state] {
			t.Errorf("%s: ids %s %s", tc.state, detail.ID, detail.SubscriptionID)
		}
	}
	if _, err := f.svc.Get(ctx, "globex", f.jobs[hubapi.DeliveryPending]); !isCode(err, service.CodeDeliveryNotFound) {
		t.Errorf("another tenant's delivery: %v", err)
	}
}

// encodeTestCursor makes a cursor the way the hub encodes them, so a test
// can forge a well-formed one with a position the hub must refuse.
func encodeTestCursor(raw string) string { return base64.RawURLEncoding.EncodeToString([]byte(raw)) }

func TestCountDeliveriesOfTheLastDay(t *testing.T) {
	f := newDeliveryFixture(t)
	ctx := context.Background()
	// The fixture's deliveries are old; two are made recent.
	if _, err := f.st.Pool.Exec(ctx, `UPDATE delivery_jobs SET created_at = now() - interval '1 hour' WHERE id = ANY($1)`,
		[]string{f.jobs[hubapi.DeliverySucceeded], f.jobs[hubapi.DeliveryDead]}); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	counts, err := f.svc.Count(ctx, "acme", []string{f.sub})
	if err != nil {
		t.Fatal(err)
	}
	want := []hubapi.SubscriptionDeliveryCounts{{SubscriptionID: f.sub, Delivered: 1, Dead: 1}}
	if !slices.Equal(counts.Items, want) || counts.Since.Before(before.Add(-hubapi.DeliveryCountsWindow-time.Second)) || counts.Since.After(time.Now().Add(-hubapi.DeliveryCountsWindow)) {
		t.Errorf("counts %+v, want %+v since a day ago", counts, want)
	}
	if _, err := f.svc.Count(ctx, "globex", []string{f.sub}); !isCode(err, service.CodeSubscriptionNotFound) {
		t.Errorf("another tenant's subscription: %v", err)
	}
}

func TestAttemptLatencyOfTheLastDay(t *testing.T) {
	f := newDeliveryFixture(t)
	ctx := context.Background()
	// The fixture's attempts (1500 ms and 7 ms) are old; they are moved
	// into the hour before this one.
	if _, err := f.st.Pool.Exec(ctx, `UPDATE delivery_attempts SET started_at = now() - interval '1 hour'`); err != nil {
		t.Fatal(err)
	}
	latency, err := f.svc.Latency(ctx, "acme", f.sub)
	if err != nil {
		t.Fatal(err)
	}
	if len(latency.Hours) != hubapi.LatencyHours || !latency.Hours[0].Start.Equal(latency.Since) ||
		!latency.Hours[23].Start.Equal(time.Now().UTC().Truncate(time.Hour)) || latency.Sampled {
		t.Fatalf("hours from %v, the last at %v, sampled %t", latency.Since, latency.Hours[len(latency.Hours)-1].Start, latency.Sampled)
	}
	for i, h := range latency.Hours {
		switch {
		case i == 22 && (h.Attempts != 2 || h.P50MS == nil || *h.P50MS != 7 || *h.P95MS != 1500):
			t.Errorf("the hour before this one: %+v, want 2 attempts, p50 7 ms, p95 1500 ms", h)
		case i != 22 && (h.Attempts != 0 || h.P50MS != nil || h.P95MS != nil):
			t.Errorf("hour %d: %+v, want none", i, h)
		}
	}
	for _, tc := range []struct{ tenant, sub string }{{"globex", f.sub}, {"acme", "orders"}, {"a/b", f.sub}} {
		if _, err := f.svc.Latency(ctx, tc.tenant, tc.sub); !isCode(err, service.CodeSubscriptionNotFound) {
			t.Errorf("latency of %s as %s: %v", tc.sub, tc.tenant, err)
		}
	}
}
