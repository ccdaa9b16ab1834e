package queue

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// fakeHandoff is a dispatcher's side of a handover: it grants what room it
// has and records what it was given.
type fakeHandoff struct {
	mu       sync.Mutex
	room     int
	lease    HandoffLease
	reserved int
	canceled int
	taken    []ClaimedJob
}

func (f *fakeHandoff) ReserveHandoff(n int) (HandoffLease, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n > f.room-f.reserved {
		return HandoffLease{}, false
	}
	f.reserved += n
	return f.lease, true
}

func (f *fakeHandoff) CancelHandoff(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reserved -= n
	f.canceled += n
}

func (f *fakeHandoff) TakeHandoff(jobs []ClaimedJob) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reserved -= len(jobs)
	f.taken = append(f.taken, jobs...)
}

func newFakeHandoff(room int) *fakeHandoff {
	return &fakeHandoff{room: room, lease: HandoffLease{
		Owner: "this-process", Start: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC), Margin: 25 * time.Second,
	}}
}

type storedJob struct {
	state, owner string
	leaseUntil   *time.Time
}

func jobsOfSubscription(t *testing.T, st *testStore, sub string) map[int64]storedJob {
	t.Helper()
	rows, err := st.Pool.Query(context.Background(),
		`SELECT event_seq, state, coalesce(lease_owner, ''), lease_until FROM delivery_jobs WHERE subscription_id = $1`, sub)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	jobs := map[int64]storedJob{}
	for rows.Next() {
		var seq int64
		var j storedJob
		if err := rows.Scan(&seq, &j.state, &j.owner, &j.leaseUntil); err != nil {
			t.Fatal(err)
		}
		jobs[seq] = j
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return jobs
}

func TestABatchLeasesTheFirstAttemptsOfPlainSubscriptionsToItsHandoff(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	plain := addTestSubscription(t, st, "t-a", "webhook", []string{"*"})
	ordered := addTestSubscription(t, st, "t-a", "webhook", []string{"*"})
	limited := addTestSubscription(t, st, "t-a", "webhook", []string{"*"})
	if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET ordering = 'tenant' WHERE id = $1`, ordered); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET rate_limit = 10, attempt_timeout_ms = 3000 WHERE id = $1`, limited); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET attempt_timeout_ms = 4000 WHERE id = $1`, plain); err != nil {
		t.Fatal(err)
	}
	h := newFakeHandoff(10)
	b := batchOf(0, 2, accepted(t, 0, "t-a", testEventID(1), []byte(`{"n":1}`)), accepted(t, 1, "t-a", testEventID(2), []byte(`{"n":2}`)))
	b.Handoff = h
	res := writeBatch(t, st, b)
	if res.Jobs != 6 || res.HandedOver != 2 {
		t.Fatalf("Jobs, HandedOver = %d, %d; want 6, 2 (the plain subscription's)", res.Jobs, res.HandedOver)
	}

	wantUntil := h.lease.Start.Add(4*time.Second + h.lease.Margin)
	for seq, j := range jobsOfSubscription(t, st, plain) {
		if j.state != "in_flight" || j.owner != "this-process" || j.leaseUntil == nil || !j.leaseUntil.Equal(wantUntil) {
			t.Errorf("plain subscription's job of seq %d = %+v, want in flight, leased to this-process until %s", seq, j, wantUntil)
		}
	}
	for name, sub := range map[string]string{"ordered": ordered, "rate-limited": limited} {
		for seq, j := range jobsOfSubscription(t, st, sub) {
			if j.state != "pending" || j.owner != "" || j.leaseUntil != nil {
				t.Errorf("%s subscription's job of seq %d = %+v, want pending: its controls live in the claim", name, seq, j)
			}
		}
	}

	if len(h.taken) != 2 || h.reserved != 0 || h.canceled != 0 {
		t.Fatalf("handoff took %d jobs (reserved %d, canceled %d); want 2, 0, 0", len(h.taken), h.reserved, h.canceled)
	}
	for i, job := range h.taken {
		if job.SubscriptionID != uuid.MustParse(plain) || job.TenantID != "t-a" || job.Attempts != 0 || !job.LeaseUntil.Equal(wantUntil) {
			t.Errorf("handed job %d = %+v", i, job)
		}
		if job.Event.ID != testEventID(i+1) || string(job.Event.Payload) != `{"n":`+string(rune('1'+i))+`}` ||
			job.Event.Type != "studio.lerian.transaction.posted" || job.Event.TraceParent == "" || job.Event.ReceivedAt.IsZero() {
			t.Errorf("handed job %d carries event %+v, want the stored event %s as a claim reads it", i, job.Event, testEventID(i+1))
		}
	}
	// The claim reads the same version the handed job names.
	var version time.Time
	if err := st.Pool.QueryRow(ctx, `SELECT updated_at FROM subscriptions WHERE id = $1`, plain).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if !h.taken[0].SubscriptionUpdatedAt.Equal(version) {
		t.Errorf("handed job names subscription version %s, want %s", h.taken[0].SubscriptionUpdatedAt, version)
	}
}

func TestABatchHandsNothingOverWhileItsTenantHasDueWorkOrTheDispatcherNoRoom(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	subA := addTestSubscription(t, st, "t-a", "webhook", []string{"*"})
	subB := addTestSubscription(t, st, "t-b", "webhook", []string{"*"})

	// An older event of t-a still waits for a claim: t-a's new jobs wait
	// behind it, t-b's are handed over.
	writeBatch(t, st, batchOf(0, 1, accepted(t, 0, "t-a", testEventID(1), []byte("{}"))))
	h := newFakeHandoff(10)
	b := batchOf(0, 3, accepted(t, 1, "t-a", testEventID(2), []byte("{}")), accepted(t, 2, "t-b", testEventID(3), []byte("{}")))
	b.Handoff = h
	if res := writeBatch(t, st, b); res.HandedOver != 1 {
		t.Fatalf("HandedOver = %d, want 1 (t-b's job)", res.HandedOver)
	}
	for _, j := range jobsOfSubscription(t, st, subA) {
		if j.state != "pending" {
			t.Errorf("t-a job %+v, want pending behind t-a's due job", j)
		}
	}
	if len(h.taken) != 1 || h.taken[0].SubscriptionID != uuid.MustParse(subB) {
		t.Fatalf("handed %+v, want t-b's job only", h.taken)
	}

	// A retry due later does not hold the tenant back.
	if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET next_attempt_at = now() + interval '1 hour' WHERE subscription_id = $1`, subA); err != nil {
		t.Fatal(err)
	}
	b = batchOf(0, 4, accepted(t, 3, "t-a", testEventID(4), []byte("{}")))
	b.Handoff = h
	if res := writeBatch(t, st, b); res.HandedOver != 1 {
		t.Errorf("HandedOver = %d, want 1: t-a has nothing due", res.HandedOver)
	}

	// Room for fewer jobs than the batch has: all stay pending, none is
	// handed over ahead of an older one of its subscription.
	small := newFakeHandoff(1)
	b = batchOf(0, 6, accepted(t, 4, "t-b", testEventID(5), []byte("{}")), accepted(t, 5, "t-b", testEventID(6), []byte("{}")))
	b.Handoff = small
	if res := writeBatch(t, st, b); res.HandedOver != 0 || len(small.taken) != 0 || small.reserved != 0 {
		t.Errorf("HandedOver = %d (taken %d, reserved %d), want nothing without room for the whole batch", res.HandedOver, len(small.taken), small.reserved)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM delivery_jobs WHERE subscription_id = $1 AND state = 'pending'`, subB); n != 2 {
		t.Errorf("t-b pending jobs = %d, want 2", n)
	}
}

func TestABatchThatFailsGivesItsHandoffReservationBack(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	addTestSubscription(t, st, "t-a", "webhook", []string{"*"})
	// The offset is stored after the jobs are written: failing it fails
	// the batch once its jobs are planned.
	if _, err := st.Pool.Exec(ctx, `
CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
CREATE TRIGGER refuse BEFORE UPDATE ON kafka_offsets FOR EACH ROW EXECUTE FUNCTION refuse();`); err != nil {
		t.Fatal(err)
	}
	h := newFakeHandoff(10)
	b := batchOf(0, 1, accepted(t, 0, "t-a", testEventID(1), []byte("{}")))
	b.Handoff = h
	if _, err := st.WriteIngestBatch(ctx, b); err == nil {
		t.Fatal("the batch was stored despite the refusing trigger")
	}
	if h.canceled != 1 || h.reserved != 0 || len(h.taken) != 0 {
		t.Errorf("canceled %d, reserved %d, taken %d; want the reservation of 1 given back and nothing taken", h.canceled, h.reserved, len(h.taken))
	}
	if n := queryCount(t, st, `SELECT count(*) FROM delivery_jobs`); n != 0 {
		t.Errorf("%d jobs stored by a failed batch", n)
	}
}
