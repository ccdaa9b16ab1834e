package catalog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

// deliveryBase is when the seeded deliveries were created.
var deliveryBase = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// seedSubscription inserts a webhook subscription of tenant (and the
// tenant) and returns its id.
func seedSubscription(t *testing.T, st *storetest.Store, tenant string) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	if _, err := st.Pool.Exec(ctx, `INSERT INTO tenants (id) VALUES ($1) ON CONFLICT DO NOTHING`, tenant); err != nil {
		t.Fatalf("insert tenant: %v", err)
	}
	id := uuid.Must(uuid.NewV7())
	_, err := st.Pool.Exec(ctx, `
		INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state, signing_secret)
		VALUES ($1, $2, 'hook', 'webhook', 'https://hooks.test:443', '{*}', 'active', 'sealed')`, id, tenant)
	if err != nil {
		t.Fatalf("insert subscription: %v", err)
	}
	return id
}

// seedDelivery stores event n of tenant and a job for it under sub in
// state, both n minutes after deliveryBase (as ingest writes them: the job
// created in its event's transaction); a dead job is dead as exhausted. It returns the job's id and the
// event's seq.
func seedDelivery(t *testing.T, st *storetest.Store, tenant string, sub uuid.UUID, n int, state string) (uuid.UUID, int64) {
	t.Helper()
	ctx := context.Background()
	var seq int64
	err := st.Pool.QueryRow(ctx, `
		INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
		                    header_keys, header_values, payload, topic, kafka_partition, kafka_offset, received_at)
		VALUES ($1, $2, 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.transaction.posted', $3,
		        '{}', '{}', '{}', 'topic', 0, $4, $5)
		RETURNING seq`, tenant, eventID(n), deliveryBase, n, deliveryBase.Add(time.Duration(n)*time.Minute)).Scan(&seq)
	if err != nil {
		t.Fatalf("insert event: %v", err)
	}
	id := uuid.Must(uuid.NewV7())
	_, err = st.Pool.Exec(ctx, `
		INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, next_attempt_at, lease_until,
		                           dead_reason, dead_at, succeeded_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6,
		        CASE WHEN $5 = 'in_flight' THEN $6::timestamptz END,
		        CASE WHEN $5 = 'dead' THEN 'exhausted' END,
		        CASE WHEN $5 = 'dead' THEN $6::timestamptz END,
		        CASE WHEN $5 = 'succeeded' THEN $6::timestamptz END,
		        $6, $6)`,
		id, tenant, sub, seq, state, deliveryBase.Add(time.Duration(n)*time.Minute))
	if err != nil {
		t.Fatalf("insert job: %v", err)
	}
	return id, seq
}

func eventID(n int) string { return fmt.Sprintf("0190b6a2-7c1e-7d3a-9f00-%012x", n) }

// seedAttempt records attempt number of job.
func seedAttempt(t *testing.T, st *storetest.Store, job uuid.UUID, number int, status *int, errText *string, response []byte) uuid.UUID {
	t.Helper()
	outcome := "failed"
	if errText == nil {
		outcome = "succeeded"
	}
	id := uuid.Must(uuid.NewV7())
	_, err := st.Pool.Exec(context.Background(), `
		INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		id, job, number, deliveryBase.Add(time.Duration(number)*time.Second), 10*number, outcome, status, errText, response)
	if err != nil {
		t.Fatalf("insert attempt: %v", err)
	}
	return id
}

func ptr[T any](v T) *T { return &v }

func TestListDeliveriesPagesNewestFirst(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	sub := seedSubscription(t, st, "acme")
	states := []string{"succeeded", "dead", "pending", "in_flight", "dead", "canceled", "pending"}
	var seqs []int64
	for n, state := range states {
		_, seq := seedDelivery(t, st, "acme", sub, n+1, state)
		seqs = append(seqs, seq)
	}
	// Another subscription's deliveries never show.
	seedDelivery(t, st, "acme", seedSubscription(t, st, "acme"), 100, "pending")

	// Delivery n was created n minutes after deliveryBase.
	minute := func(n int) time.Time { return deliveryBase.Add(time.Duration(n) * time.Minute) }
	cases := []struct {
		name         string
		state        string
		since, until time.Time
		limit        int
		want         []int64 // event seqs, in listing order
	}{
		{"all, two at a time", "", time.Time{}, time.Time{}, 2, []int64{seqs[6], seqs[5], seqs[4], seqs[3], seqs[2], seqs[1], seqs[0]}},
		{"all in one page", "", time.Time{}, time.Time{}, 100, []int64{seqs[6], seqs[5], seqs[4], seqs[3], seqs[2], seqs[1], seqs[0]}},
		{"dead only", "dead", time.Time{}, time.Time{}, 1, []int64{seqs[4], seqs[1]}},
		{"pending only", "pending", time.Time{}, time.Time{}, 5, []int64{seqs[6], seqs[2]}},
		{"succeeded only", "succeeded", time.Time{}, time.Time{}, 3, []int64{seqs[0]}},
		{"created in a window, since inclusive, until exclusive", "", minute(2), minute(5), 2, []int64{seqs[3], seqs[2], seqs[1]}},
		{"created since", "", minute(6), time.Time{}, 1, []int64{seqs[6], seqs[5]}},
		{"created until", "", time.Time{}, minute(2), 1, []int64{seqs[0]}},
		{"dead in a window", "dead", minute(3), time.Time{}, 1, []int64{seqs[4]}},
		{"a window with none", "", minute(8), time.Time{}, 1, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []int64
			q := catalog.DeliveryQuery{TenantID: "acme", SubscriptionID: sub, Limit: tc.limit, State: tc.state, Since: tc.since, Until: tc.until}
			for range len(states) + 1 {
				page, more, err := st.ListDeliveries(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) > tc.limit {
					t.Fatalf("page of %d for limit %d", len(page), tc.limit)
				}
				for _, d := range page {
					got = append(got, d.EventSeq)
					if tc.state != "" && d.State != tc.state {
						t.Errorf("state %s in a listing of %s", d.State, tc.state)
					}
					if d.CreatedAt.Before(tc.since) || !tc.until.IsZero() && !d.CreatedAt.Before(tc.until) {
						t.Errorf("created at %s, outside [%s, %s)", d.CreatedAt, tc.since, tc.until)
					}
				}
				if !more {
					break
				}
				q.BeforeSeq = page[len(page)-1].EventSeq
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("listed seqs %v, want %v", got, tc.want)
			}
		})
	}
}

func TestListDeliveriesScope(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	acme := seedSubscription(t, st, "acme")
	seedDelivery(t, st, "acme", acme, 1, "pending")
	empty := seedSubscription(t, st, "acme")
	deleted := seedSubscription(t, st, "acme")
	seedDelivery(t, st, "acme", deleted, 2, "canceled")
	if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET deleted_at = now(), signing_secret = NULL WHERE id = $1`, deleted); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name     string
		tenant   string
		sub      uuid.UUID
		since    time.Time
		wantN    int
		notFound bool
	}{
		{"own subscription", "acme", acme, time.Time{}, 1, false},
		{"own subscription without deliveries", "acme", empty, time.Time{}, 0, false},
		{"own subscription, none created in the window", "acme", acme, deliveryBase.Add(time.Hour), 0, false},
		{"deleted subscription keeps its history", "acme", deleted, time.Time{}, 1, false},
		{"another tenant's subscription", "globex", acme, time.Time{}, 0, true},
		{"another tenant's subscription in a window", "globex", acme, deliveryBase, 0, true},
		{"missing subscription", "acme", uuid.Must(uuid.NewV7()), time.Time{}, 0, true},
	}
	for _, tc := range cases {
		page, more, err := st.ListDeliveries(ctx, catalog.DeliveryQuery{TenantID: tc.tenant, SubscriptionID: tc.sub, Since: tc.since, Limit: 10})
		if tc.notFound {
			if !errors.Is(err, pg.ErrNotFound) || page != nil {
				t.Errorf("%s: got %v, %v; want ErrNotFound", tc.name, page, err)
			}
			continue
		}
		if err != nil || len(page) != tc.wantN || more || page == nil {
			t.Errorf("%s: got %d deliveries (more %t), %v; want %d", tc.name, len(page), more, err, tc.wantN)
		}
	}
	if _, _, err := st.ListDeliveries(ctx, catalog.DeliveryQuery{TenantID: "acme", SubscriptionID: acme}); err == nil {
		t.Error("a limit of 0 was accepted")
	}
}

func TestGetDeliveryWithAttempts(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	sub := seedSubscription(t, st, "acme")
	job, seq := seedDelivery(t, st, "acme", sub, 7, "dead")
	// Inserted out of order: the read orders them.
	second := seedAttempt(t, st, job, 2, nil, ptr("connection refused"), nil)
	first := seedAttempt(t, st, job, 1, ptr(503), ptr("HTTP 503"), []byte{0xff, 0x00})
	if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET attempts = 2, last_error = 'connection refused' WHERE id = $1`, job); err != nil {
		t.Fatal(err)
	}

	d, attempts, err := st.GetDelivery(ctx, "acme", job)
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != job || d.SubscriptionID != sub || d.EventSeq != seq || d.EventID != eventID(7) || d.EventKey != "transaction.posted" ||
		d.State != "dead" || d.DeadReason != "exhausted" || d.Attempts != 2 || d.LastError != "connection refused" ||
		d.LastStatus != nil || d.DeadAt == nil || d.SucceededAt != nil {
		t.Errorf("delivery %+v", d)
	}
	if len(attempts) != 2 {
		t.Fatalf("attempts %+v", attempts)
	}
	a1, a2 := attempts[0], attempts[1]
	if a1.ID != first || a1.Number != 1 || a1.Outcome != "failed" || a1.StatusCode == nil || *a1.StatusCode != 503 ||
		a1.Error != "HTTP 503" || !bytes.Equal(a1.Response, []byte{0xff, 0x00}) || a1.Duration != 10*time.Millisecond ||
		!a1.StartedAt.Equal(deliveryBase.Add(time.Second)) {
		t.Errorf("first attempt %+v", a1)
	}
	if a2.ID != second || a2.Number != 2 || a2.StatusCode != nil || a2.Response != nil || a2.Duration != 20*time.Millisecond {
		t.Errorf("second attempt %+v", a2)
	}
}

func TestGetDeliveryEdgeCases(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	sub := seedSubscription(t, st, "acme")
	fresh, _ := seedDelivery(t, st, "acme", sub, 1, "pending")
	orphan, _ := seedDelivery(t, st, "acme", sub, 2, "dead")
	if _, err := st.Pool.Exec(ctx, `DELETE FROM events WHERE id = $1`, eventID(2)); err != nil {
		t.Fatal(err)
	}

	d, attempts, err := st.GetDelivery(ctx, "acme", fresh)
	if err != nil || d.State != "pending" || attempts == nil || len(attempts) != 0 {
		t.Errorf("a delivery without attempts: %+v, %v, %v", d, attempts, err)
	}
	d, _, err = st.GetDelivery(ctx, "acme", orphan)
	if err != nil || d.EventID != "" || d.EventKey != "" {
		t.Errorf("a delivery whose event is gone: %+v, %v", d, err)
	}
	for name, tc := range map[string]struct {
		tenant string
		id     uuid.UUID
	}{
		"another tenant's delivery": {"globex", fresh},
		"a missing delivery":        {"acme", uuid.Must(uuid.NewV7())},
	} {
		if _, _, err := st.GetDelivery(ctx, tc.tenant, tc.id); !errors.Is(err, pg.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
}

func TestCountRecentDeliveries(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	busy := seedSubscription(t, st, "acme")
	// Delivery n was created n minutes after deliveryBase; the window
	// starts at minute 2, so the first is too old to count.
	seedDelivery(t, st, "acme", busy, 1, "succeeded")
	seedDelivery(t, st, "acme", busy, 2, "succeeded")
	seedDelivery(t, st, "acme", busy, 3, "dead")
	retrying, _ := seedDelivery(t, st, "acme", busy, 4, "pending")
	seedDelivery(t, st, "acme", busy, 5, "pending") // not tried yet: neither failed nor anything else
	seedDelivery(t, st, "acme", busy, 6, "succeeded")
	if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET recorded_attempts = 1 WHERE id = $1`, retrying); err != nil {
		t.Fatal(err)
	}
	quiet := seedSubscription(t, st, "acme")
	globex := seedSubscription(t, st, "globex")
	seedDelivery(t, st, "globex", globex, 7, "succeeded")
	since := deliveryBase.Add(2 * time.Minute)

	counts, err := st.CountRecentDeliveries(ctx, "acme", []uuid.UUID{busy, quiet, globex, uuid.Must(uuid.NewV7())}, since, 100)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uuid.UUID]catalog.RecentDeliveryCounts{}
	for _, c := range counts {
		got[c.SubscriptionID] = c
	}
	want := map[uuid.UUID]catalog.RecentDeliveryCounts{
		busy:  {SubscriptionID: busy, Delivered: 2, Failed: 1, Dead: 1},
		quiet: {SubscriptionID: quiet},
	}
	if len(got) != len(want) || got[busy] != want[busy] || got[quiet] != want[quiet] {
		t.Errorf("counts %+v, want %+v (another tenant's and a missing subscription left out)", got, want)
	}

	// A sample of the latest two, both recent: the window holds more.
	counts, err = st.CountRecentDeliveries(ctx, "acme", []uuid.UUID{busy}, since, 2)
	if err != nil || len(counts) != 1 || counts[0] != (catalog.RecentDeliveryCounts{SubscriptionID: busy, Delivered: 1, Sampled: true}) {
		t.Errorf("sampled counts %+v, %v", counts, err)
	}
	// A sample that reaches past the window says it holds no more.
	counts, err = st.CountRecentDeliveries(ctx, "acme", []uuid.UUID{busy}, deliveryBase.Add(5*time.Minute), 3)
	if err != nil || len(counts) != 1 || counts[0] != (catalog.RecentDeliveryCounts{SubscriptionID: busy, Delivered: 1}) {
		t.Errorf("counts of a sample past the window %+v, %v", counts, err)
	}
}

func TestAttemptLatencyByHour(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	sub := seedSubscription(t, st, "acme")
	attempt := func(job uuid.UUID, number int, at time.Duration, ms int) {
		t.Helper()
		_, err := st.Pool.Exec(ctx, `
			INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome)
			VALUES ($1, $2, $3, $4, $5, 'succeeded')`, uuid.Must(uuid.NewV7()), job, number, deliveryBase.Add(at), ms)
		if err != nil {
			t.Fatal(err)
		}
	}
	// Hour 0 of the window holds 1..20 ms, hour 2 one attempt, and one
	// attempt falls before the window.
	first, _ := seedDelivery(t, st, "acme", sub, 1, "succeeded")
	for i := 1; i <= 20; i++ {
		attempt(first, i, time.Duration(i)*time.Minute, i)
	}
	second, _ := seedDelivery(t, st, "acme", sub, 2, "succeeded")
	attempt(second, 1, 2*time.Hour+time.Minute, 300)
	attempt(second, 2, -time.Minute, 9000)
	globex := seedSubscription(t, st, "globex")

	hours, sampled, err := st.AttemptLatency(ctx, "acme", sub, deliveryBase, deliveryBase.Add(24*time.Hour), 100)
	want := []catalog.LatencyHour{
		{Hour: 0, Attempts: 20, P50: 10 * time.Millisecond, P95: 19 * time.Millisecond},
		{Hour: 2, Attempts: 1, P50: 300 * time.Millisecond, P95: 300 * time.Millisecond},
	}
	if err != nil || sampled || !slices.Equal(hours, want) {
		t.Errorf("hours %+v (sampled %t), %v; want %+v", hours, sampled, err, want)
	}
	// The latest delivery only, created in the window: sampled.
	hours, sampled, err = st.AttemptLatency(ctx, "acme", sub, deliveryBase, deliveryBase.Add(24*time.Hour), 1)
	if err != nil || !sampled || !slices.Equal(hours, want[1:]) {
		t.Errorf("the latest delivery's hours %+v (sampled %t), %v", hours, sampled, err)
	}

	for _, tc := range []struct {
		name     string
		tenant   string
		sub      uuid.UUID
		notFound bool
	}{
		{"own subscription without attempts", "globex", globex, false},
		{"another tenant's subscription", "globex", sub, true},
		{"missing subscription", "acme", uuid.Must(uuid.NewV7()), true},
	} {
		hours, _, err := st.AttemptLatency(ctx, tc.tenant, tc.sub, deliveryBase, deliveryBase.Add(24*time.Hour), 100)
		if tc.notFound != errors.Is(err, pg.ErrNotFound) || !tc.notFound && (err != nil || hours == nil || len(hours) != 0) {
			t.Errorf("%s: %v, %v", tc.name, hours, err)
		}
	}
}

// TestListDeliveriesUntilEndsTheScanWithoutLosingRecoveredOnes: a window's
// end bounds the scan by seq, from when the events were received; a job
// recovered for an older event is still listed by its own creation time.
func TestListDeliveriesUntilEndsTheScanWithoutLosingRecoveredOnes(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	sub := seedSubscription(t, st, "acme")
	t0 := deliveryBase
	// Events in seq order as ingest writes them, each job created in its
	// event's transaction, but the first one's, which a recover made
	// later.
	jobs := map[string]uuid.UUID{}
	for i, e := range []struct {
		name              string
		received, created time.Time
	}{
		{"recovered", t0.Add(-time.Hour), t0.Add(30 * time.Minute)},
		{"first", t0, t0},
		{"second", t0.Add(time.Hour), t0.Add(time.Hour)},
		{"third", t0.Add(2 * time.Hour), t0.Add(2 * time.Hour)},
	} {
		var seq int64
		err := st.Pool.QueryRow(ctx, `
			INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
			                    header_keys, header_values, payload, topic, kafka_partition, kafka_offset, received_at)
			VALUES ('acme', $1, 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.transaction.posted', $2,
			        '{}', '{}', '{}', 'topic', 0, $3, $2)
			RETURNING seq`, eventID(200+i), e.received, i).Scan(&seq)
		if err != nil {
			t.Fatal(err)
		}
		jobs[e.name] = uuid.Must(uuid.NewV7())
		if _, err := st.Pool.Exec(ctx, `
			INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, succeeded_at, created_at, updated_at)
			VALUES ($1, 'acme', $2, $3, 'succeeded', $4, $4, $4)`, jobs[e.name], sub, seq, e.created); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name         string
		since, until time.Time
		want         []string
	}{
		{"until between the first and the second", time.Time{}, t0.Add(45 * time.Minute), []string{"first", "recovered"}},
		{"until before the recover", time.Time{}, t0.Add(15 * time.Minute), []string{"first"}},
		{"until after all", time.Time{}, t0.Add(3 * time.Hour), []string{"third", "second", "first", "recovered"}},
		{"until before all", time.Time{}, t0.Add(-2 * time.Hour), nil},
		{"a window around the recover", t0.Add(20 * time.Minute), t0.Add(40 * time.Minute), []string{"recovered"}},
	} {
		page, _, err := st.ListDeliveries(ctx, catalog.DeliveryQuery{TenantID: "acme", SubscriptionID: sub, Since: tc.since, Until: tc.until, Limit: 10})
		var got []string
		for _, d := range page {
			for name, id := range jobs {
				if id == d.ID {
					got = append(got, name)
				}
			}
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
