package queue_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/match"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

// recoverEvent stores one event of tenant received at at and returns its
// seq.
func recoverEvent(t *testing.T, st *storetest.Store, tenant, key string, major int, at time.Time, payload string) int64 {
	t.Helper()
	var seq int64
	err := st.Pool.QueryRow(context.Background(), `
		INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
		                    header_keys, header_values, payload, topic, kafka_partition, kafka_offset, received_at)
		VALUES ($1, $2, $3, '1.0.0', $4, 'midaz', 'studio.lerian.' || $3, $5, '{}', '{}', $6, 'topic', 0, 0, $5)
		RETURNING seq`, tenant, uuid.Must(uuid.NewV7()), key, major, at, []byte(payload)).Scan(&seq)
	if err != nil {
		t.Fatalf("insert event: %v", err)
	}
	return seq
}

// recoverJob stores a job of sub for the event at seq in state.
func recoverJob(t *testing.T, st *storetest.Store, tenant string, sub uuid.UUID, seq int64, state string) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	_, err := st.Pool.Exec(context.Background(), `
		INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, lease_until, dead_reason, dead_at, succeeded_at)
		VALUES ($1, $2, $3, $4, $5,
		        CASE WHEN $5 = 'in_flight' THEN now() END,
		        CASE WHEN $5 = 'dead' THEN 'subscription_disabled' END,
		        CASE WHEN $5 = 'dead' THEN now() END,
		        CASE WHEN $5 = 'succeeded' THEN now() END)`, id, tenant, sub, seq, state)
	if err != nil {
		t.Fatalf("insert job: %v", err)
	}
	return id
}

// jobStates lists the states of sub's jobs for the event at seq.
func jobStates(t *testing.T, st *storetest.Store, sub uuid.UUID, seq int64) map[uuid.UUID]string {
	t.Helper()
	rows, err := st.Pool.Query(context.Background(), `SELECT id, state FROM delivery_jobs WHERE subscription_id = $1 AND event_seq = $2`, sub, seq)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	states := map[uuid.UUID]string{}
	for rows.Next() {
		var id uuid.UUID
		var state string
		if err := rows.Scan(&id, &state); err != nil {
			t.Fatal(err)
		}
		states[id] = state
	}
	return states
}

func countJobs(t *testing.T, st *storetest.Store, sub uuid.UUID) int {
	t.Helper()
	var n int
	if err := st.Pool.QueryRow(context.Background(), `SELECT count(*) FROM delivery_jobs WHERE subscription_id = $1`, sub).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRecoverQueuesExactlyWhatTheSubscriptionMissed(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	sub := seedSubscription(t, st, "acme")
	seedSubscription(t, st, "globex")
	if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET event_types = '{transaction.*}' WHERE id = $1`, sub); err != nil {
		t.Fatal(err)
	}
	since := deliveryBase
	until := since.Add(time.Hour)
	at := func(m int) time.Time { return since.Add(time.Duration(m) * time.Minute) }

	before := recoverEvent(t, st, "acme", "transaction.posted", 1, since.Add(-time.Second), "{}")
	delivered := recoverEvent(t, st, "acme", "transaction.posted", 1, at(1), "{}")
	recoverJob(t, st, "acme", sub, delivered, "succeeded")
	missed := recoverEvent(t, st, "acme", "transaction.posted", 1, at(2), "{}")
	shed := recoverEvent(t, st, "acme", "transaction.reverted", 1, at(3), "{}")
	shedJob := recoverJob(t, st, "acme", sub, shed, "dead")
	pending := recoverEvent(t, st, "acme", "transaction.posted", 1, at(4), "{}")
	recoverJob(t, st, "acme", sub, pending, "pending")
	inFlight := recoverEvent(t, st, "acme", "transaction.posted", 1, at(5), "{}")
	recoverJob(t, st, "acme", sub, inFlight, "in_flight")
	otherKey := recoverEvent(t, st, "acme", "balance.updated", 1, at(6), "{}")
	otherTenant := recoverEvent(t, st, "globex", "transaction.posted", 1, at(7), "{}")
	otherMajor := recoverEvent(t, st, "acme", "transaction.posted", 2, at(8), "{}")
	missedToo := recoverEvent(t, st, "acme", "transaction.posted", 1, at(59), "{}")
	atUntil := recoverEvent(t, st, "acme", "transaction.posted", 1, until, "{}")
	jobsBefore := countJobs(t, st, sub)

	r := queue.RecoverRange{TenantID: "acme", SubscriptionID: sub, Since: since, Until: until}
	// The matched: missed, shed, pending, inFlight, missedToo.
	dry, err := st.Recover(ctx, r, routeNewEvents, time.Now(), true, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if dry != (queue.RecoverResult{Matched: 5}) {
		t.Fatalf("dry run = %+v, want 5 matched, none queued", dry)
	}
	if n := countJobs(t, st, sub); n != jobsBefore {
		t.Fatalf("the dry run changed the jobs: %d, want %d", n, jobsBefore)
	}

	var last queue.RecoverProgress
	calls := 0
	got, err := st.Recover(ctx, r, routeNewEvents, time.Now(), false, 2, func(p queue.RecoverProgress) { last = p; calls++ })
	if err != nil {
		t.Fatal(err)
	}
	// missed and missedToo get new jobs; shed's dead job goes back.
	if got != (queue.RecoverResult{Matched: 5, Queued: 3}) {
		t.Fatalf("recover = %+v, want 5 matched, 3 queued", got)
	}
	if calls < 2 || last.Done != last.Total || last.RecoverResult != got {
		t.Errorf("progress: %d calls, last %+v; want several, ending complete at %+v", calls, last, got)
	}
	for _, seq := range []int64{missed, missedToo} {
		if states := jobStates(t, st, sub, seq); len(states) != 1 || !mapHas(states, "pending") {
			t.Errorf("event %d: jobs %v, want one pending", seq, states)
		}
	}
	if states := jobStates(t, st, sub, shed); len(states) != 1 || states[shedJob] != "pending" {
		t.Errorf("shed event: jobs %v, want its dead job %s pending again", states, shedJob)
	}
	for _, seq := range []int64{before, otherKey, otherMajor, atUntil} {
		if states := jobStates(t, st, sub, seq); len(states) != 0 {
			t.Errorf("event %d outside the recover got jobs %v", seq, states)
		}
	}
	for _, seq := range []int64{delivered, pending, inFlight} {
		if states := jobStates(t, st, sub, seq); len(states) != 1 {
			t.Errorf("event %d: jobs %v, want its one job alone", seq, states)
		}
	}
	if n := countJobs(t, st, sub); n != jobsBefore+2 {
		t.Errorf("%d jobs, want %d", n, jobsBefore+2)
	}
	var foreign int
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM delivery_jobs WHERE event_seq = $1`, otherTenant).Scan(&foreign); err != nil || foreign != 0 {
		t.Errorf("another tenant's event got %d jobs (%v)", foreign, err)
	}

	again, err := st.Recover(ctx, r, routeNewEvents, time.Now(), false, queue.DefaultRecoverBatch, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again != (queue.RecoverResult{Matched: 5}) || countJobs(t, st, sub) != jobsBefore+2 {
		t.Fatalf("recover again = %+v, %d jobs; want 5 matched, nothing queued", again, countJobs(t, st, sub))
	}
}

func mapHas(m map[uuid.UUID]string, v string) bool {
	for _, x := range m {
		if x == v {
			return true
		}
	}
	return false
}

func TestRecoverAppliesTheSubscriptionsFilterNow(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	sub := seedSubscription(t, st, "acme")
	// Disabled and unverified: recover matches by the rules alone.
	if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET filter = 'data.amount > 100', enabled = false, verification_state = 'failed' WHERE id = $1`, sub); err != nil {
		t.Fatal(err)
	}
	big := recoverEvent(t, st, "acme", "transaction.posted", 1, deliveryBase, `{"amount": 150}`)
	recoverEvent(t, st, "acme", "transaction.posted", 1, deliveryBase, `{"amount": 5}`)
	recoverEvent(t, st, "acme", "transaction.posted", 1, deliveryBase, `not json`)
	got, err := st.Recover(ctx, queue.RecoverRange{TenantID: "acme", SubscriptionID: sub, Since: deliveryBase, Until: deliveryBase.Add(time.Minute)}, routeNewEvents, time.Now(), false, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got != (queue.RecoverResult{Matched: 1, Queued: 1}) || len(jobStates(t, st, sub, big)) != 1 {
		t.Fatalf("recover = %+v; want the one event the filter passes queued", got)
	}
}

// TestRecoverKeysTheJobsOfAnOrderedSubscription: a recovered event of a
// subscription ordered by subject waits its turn among its subject's
// deliveries like any other, so its new job carries the key ingest would
// have given it.
func TestRecoverKeysTheJobsOfAnOrderedSubscription(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	sub := seedSubscription(t, st, "acme")
	if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET ordering = 'subject' WHERE id = $1`, sub); err != nil {
		t.Fatal(err)
	}
	withSubject := recoverEvent(t, st, "acme", "transaction.posted", 1, deliveryBase, `{}`)
	without := recoverEvent(t, st, "acme", "transaction.posted", 1, deliveryBase, `{}`)
	if _, err := st.Pool.Exec(ctx, `UPDATE events SET subject = 'acct-1' WHERE seq = $1`, withSubject); err != nil {
		t.Fatal(err)
	}
	got, err := st.Recover(ctx, queue.RecoverRange{TenantID: "acme", SubscriptionID: sub, Since: deliveryBase, Until: deliveryBase.Add(time.Minute)}, routeNewEvents, time.Now(), false, 0, nil)
	if err != nil || got.Queued != 2 {
		t.Fatalf("recover = %+v, %v; want both events queued", got, err)
	}
	for seq, want := range map[int64]string{withSubject: "acct-1", without: ""} {
		var key *string
		if err := st.Pool.QueryRow(ctx, `SELECT ordering_key FROM delivery_jobs WHERE subscription_id = $1 AND event_seq = $2`, sub, seq).Scan(&key); err != nil {
			t.Fatal(err)
		}
		if key == nil || *key != want {
			t.Errorf("job of event %d has ordering key %v, want %q", seq, key, want)
		}
	}
}

func TestConcurrentRecoversQueueEachEventOnce(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	sub := seedSubscription(t, st, "acme")
	const events = 60
	for i := range events {
		recoverEvent(t, st, "acme", "transaction.posted", 1, deliveryBase.Add(time.Duration(i)*time.Second), "{}")
	}
	r := queue.RecoverRange{TenantID: "acme", SubscriptionID: sub, Since: deliveryBase, Until: deliveryBase.Add(time.Hour)}
	var wg sync.WaitGroup
	results := make([]queue.RecoverResult, 6)
	errs := make([]error, len(results))
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = st.Recover(ctx, r, routeNewEvents, time.Now(), false, 7, nil)
		}()
	}
	wg.Wait()
	var queued int64
	for i, res := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		queued += res.Queued
	}
	var n, distinct int
	err := st.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT event_seq) FROM delivery_jobs WHERE subscription_id = $1`, sub).Scan(&n, &distinct)
	if err != nil {
		t.Fatal(err)
	}
	if queued != events || n != events || distinct != events {
		t.Fatalf("queued %d, %d jobs for %d events; want %d of each", queued, n, distinct, events)
	}
}

// TestRecoverFindsEventsOfALateSequenceRoll: events received early on a
// day carry seqs of the day before until the maintainer moves the
// sequence; a recover from that day's start still finds them, and reads
// no day's partition it does not need.
func TestRecoverFindsEventsOfALateSequenceRoll(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	sub := seedSubscription(t, st, "acme")
	// Days from today on: the ranges before are the legacy partition's.
	day1 := time.Now().UTC().Truncate(24 * time.Hour)
	day2, day3 := day1.Add(24*time.Hour), day1.Add(48*time.Hour)
	if err := st.EnsurePartitions(ctx, day1); err != nil {
		t.Fatal(err)
	}
	early := recoverEvent(t, st, "acme", "transaction.posted", 1, day1.Add(time.Hour), "{}")
	lateRoll := recoverEvent(t, st, "acme", "transaction.posted", 1, day2.Add(5*time.Minute), "{}")
	if err := st.EnsurePartitions(ctx, day2); err != nil {
		t.Fatal(err)
	}
	rolled := recoverEvent(t, st, "acme", "transaction.posted", 1, day2.Add(time.Hour), "{}")
	if lateRoll >= pg.DaySeqBase(day2) || rolled < pg.DaySeqBase(day2) {
		t.Fatalf("seqs %d and %d: want the first below day 2's base %d, the second at or above", lateRoll, rolled, pg.DaySeqBase(day2))
	}
	recover := func(since, until time.Time) queue.RecoverResult {
		t.Helper()
		res, err := st.Recover(ctx, queue.RecoverRange{TenantID: "acme", SubscriptionID: sub, Since: since, Until: until}, routeNewEvents, time.Now(), true, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if got := recover(day2, day3); got.Matched != 2 {
		t.Errorf("recover of day 2: %d matched, want 2 (the late roll's event too)", got.Matched)
	}
	if got := recover(day1, day2); got.Matched != 1 {
		t.Errorf("recover of day 1: %d matched, want 1 (seq %d)", got.Matched, early)
	}
	if got := recover(day1, day3); got.Matched != 3 {
		t.Errorf("recover of both days: %d matched, want 3", got.Matched)
	}
}

func TestRecoverRefusesPullAndDeletedSubscriptions(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	pull := seedSubscription(t, st, "acme")
	gone := seedSubscription(t, st, "acme")
	if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET sink_type = 'pull', signing_secret = NULL WHERE id = $1`, pull); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DeleteSubscription(ctx, "acme", gone, deliveryBase); err != nil {
		t.Fatal(err)
	}
	recoverEvent(t, st, "acme", "transaction.posted", 1, deliveryBase, "{}")
	r := queue.RecoverRange{TenantID: "acme", Since: deliveryBase, Until: deliveryBase.Add(time.Minute)}
	for _, c := range []struct {
		name string
		id   uuid.UUID
		want error
	}{{"pull", pull, pg.ErrConflict}, {"deleted", gone, pg.ErrNotFound}, {"missing", uuid.Must(uuid.NewV7()), pg.ErrNotFound}} {
		r.SubscriptionID = c.id
		if _, err := st.Recover(ctx, r, routeNewEvents, time.Now(), false, 0, nil); !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
	}
}

// routeNewEvents is the router ingest passes, without filter limits.
var routeNewEvents = match.Router(match.FilterLimits{})
