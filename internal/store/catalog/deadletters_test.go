package catalog_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/autodisable"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

// deadJob makes a dead job of sub with reason, dead at deliveryBase plus
// minutes, after attempts recorded attempts and recoveries lease
// recoveries.
func deadJob(t *testing.T, st *storetest.Store, tenant string, sub uuid.UUID, n int, reason string, minutes, attempts int) uuid.UUID {
	t.Helper()
	id, _ := seedDelivery(t, st, tenant, sub, n, "dead")
	for a := 1; a <= attempts; a++ {
		seedAttempt(t, st, id, a, ptr(503), ptr("HTTP 503"), nil)
	}
	_, err := st.Pool.Exec(context.Background(), `
		UPDATE delivery_jobs SET dead_reason = $2, dead_at = $3, attempts = $4, recorded_attempts = $4, recoveries = 3,
		       last_error = 'HTTP 503', last_status = 503
		WHERE id = $1`, id, reason, deliveryBase.Add(time.Duration(minutes)*time.Minute), attempts)
	if err != nil {
		t.Fatalf("kill job: %v", err)
	}
	return id
}

// deadLetterWorld is acme's dead letters across two subscriptions, one of
// a deleted subscription, and another tenant's, plus a job that is not dead.
type deadLetterWorld struct {
	subA, subB uuid.UUID
	// a1..b1 in the order they died: a1 first.
	a1, a2, b1, a3 uuid.UUID
	deleted, other uuid.UUID
}

func seedDeadLetters(t *testing.T, st *storetest.Store) deadLetterWorld {
	t.Helper()
	var w deadLetterWorld
	w.subA, w.subB = seedSubscription(t, st, "acme"), seedSubscription(t, st, "acme")
	w.a1 = deadJob(t, st, "acme", w.subA, 1, "exhausted", 10, 8)
	w.a2 = deadJob(t, st, "acme", w.subA, 2, "poison", 20, 1)
	w.b1 = deadJob(t, st, "acme", w.subB, 3, "subscription_disabled", 30, 0)
	w.a3 = deadJob(t, st, "acme", w.subA, 4, "exhausted", 40, 8)
	seedDelivery(t, st, "acme", w.subA, 5, "pending")
	gone := seedSubscription(t, st, "acme")
	w.deleted = deadJob(t, st, "acme", gone, 6, "exhausted", 50, 8)
	if _, err := st.DeleteSubscription(context.Background(), "acme", gone, deliveryBase); err != nil {
		t.Fatal(err)
	}
	w.other = deadJob(t, st, "globex", seedSubscription(t, st, "globex"), 7, "exhausted", 60, 8)
	return w
}

func TestDeadLetterFiltersSelectExactlyTheRightJobs(t *testing.T) {
	st := storetest.Open(t)
	w := seedDeadLetters(t, st)
	at := func(minutes int) time.Time { return deliveryBase.Add(time.Duration(minutes) * time.Minute) }
	cases := []struct {
		name   string
		filter catalog.DeadLetterFilter
		want   []uuid.UUID // most recently dead first
	}{
		{"everything of the tenant", catalog.DeadLetterFilter{}, []uuid.UUID{w.a3, w.b1, w.a2, w.a1}},
		{"one subscription", catalog.DeadLetterFilter{SubscriptionID: w.subB}, []uuid.UUID{w.b1}},
		{"a reason", catalog.DeadLetterFilter{Reason: "exhausted"}, []uuid.UUID{w.a3, w.a1}},
		{"since is inclusive", catalog.DeadLetterFilter{Since: at(20)}, []uuid.UUID{w.a3, w.b1, w.a2}},
		{"until is exclusive", catalog.DeadLetterFilter{Until: at(30)}, []uuid.UUID{w.a2, w.a1}},
		{"a window and a subscription", catalog.DeadLetterFilter{SubscriptionID: w.subA, Since: at(15), Until: at(45)}, []uuid.UUID{w.a3, w.a2}},
		{"ids", catalog.DeadLetterFilter{IDs: []uuid.UUID{w.a1, w.b1, w.deleted, w.other}}, []uuid.UUID{w.b1, w.a1}},
		{"ids and a reason", catalog.DeadLetterFilter{IDs: []uuid.UUID{w.a1, w.a2}, Reason: "poison"}, []uuid.UUID{w.a2}},
		{"no match", catalog.DeadLetterFilter{SubscriptionID: uuid.Must(uuid.NewV7())}, nil},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.filter.TenantID = "acme"
			// Listed one at a time, so every page boundary is crossed.
			var got []uuid.UUID
			q := catalog.DeadLetterQuery{DeadLetterFilter: tc.filter, Limit: 1}
			for {
				page, more, err := st.ListDeadLetters(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range page {
					got = append(got, d.ID)
				}
				if !more {
					break
				}
				last := page[len(page)-1]
				q.After = &catalog.DeadLetterPosition{DeadAt: last.DeadAt, ID: last.ID}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("listed %v, want %v", got, tc.want)
			}
			res, err := st.ReplayDeadLetters(ctx, tc.filter, time.Now(), true)
			if err != nil {
				t.Fatal(err)
			}
			if res != (catalog.ReplayResult{Matched: int64(len(tc.want))}) {
				t.Errorf("dry run = %+v, want %d matched and none replayed", res, len(tc.want))
			}
		})
	}
}

func TestDeadLetterListingShowsTheJob(t *testing.T) {
	st := storetest.Open(t)
	w := seedDeadLetters(t, st)
	page, _, err := st.ListDeadLetters(context.Background(), catalog.DeadLetterQuery{
		DeadLetterFilter: catalog.DeadLetterFilter{TenantID: "acme", IDs: []uuid.UUID{w.a1}}, Limit: 10})
	if err != nil || len(page) != 1 {
		t.Fatalf("list = %v, %v", page, err)
	}
	want := catalog.DeadLetter{ID: w.a1, SubscriptionID: w.subA, EventID: eventID(1), EventKey: "transaction.posted",
		Reason: "exhausted", Attempts: 8, LastError: "HTTP 503", LastStatus: ptr(503), DeadAt: deliveryBase.Add(10 * time.Minute)}
	got := page[0]
	if got.LastStatus == nil || *got.LastStatus != 503 {
		t.Fatalf("last status = %v", got.LastStatus)
	}
	got.LastStatus, want.LastStatus = nil, nil
	got.DeadAt = got.DeadAt.UTC()
	if got != want {
		t.Errorf("dead letter = %+v\nwant         %+v", got, want)
	}
}

// jobRow is the part of a job a replay changes.
type jobRow struct {
	State      string
	Attempts   int
	Recoveries int
	DeadReason *string
	DeadAt     *time.Time
	History    int
}

func readJob(t *testing.T, st *storetest.Store, id uuid.UUID) jobRow {
	t.Helper()
	var r jobRow
	err := st.Pool.QueryRow(context.Background(), `
		SELECT state, attempts, recoveries, dead_reason, dead_at,
		       (SELECT count(*) FROM delivery_attempts WHERE job_id = j.id)
		FROM delivery_jobs j WHERE id = $1`, id).
		Scan(&r.State, &r.Attempts, &r.Recoveries, &r.DeadReason, &r.DeadAt, &r.History)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDryRunChangesNothing(t *testing.T) {
	st := storetest.Open(t)
	w := seedDeadLetters(t, st)
	ids := []uuid.UUID{w.a1, w.a2, w.b1, w.a3, w.deleted, w.other}
	before := make([]jobRow, len(ids))
	for i, id := range ids {
		before[i] = readJob(t, st, id)
	}
	res, err := st.ReplayDeadLetters(context.Background(), catalog.DeadLetterFilter{TenantID: "acme"}, time.Now(), true)
	if err != nil || res != (catalog.ReplayResult{Matched: 4}) {
		t.Fatalf("dry run = %+v, %v; want 4 matched", res, err)
	}
	for i, id := range ids {
		if after := readJob(t, st, id); !equalJobRows(after, before[i]) {
			t.Errorf("job %d changed on a dry run: %+v -> %+v", i, before[i], after)
		}
	}
}

func equalJobRows(a, b jobRow) bool {
	return a.State == b.State && a.Attempts == b.Attempts && a.Recoveries == b.Recoveries &&
		(a.DeadReason == nil) == (b.DeadReason == nil) && (a.DeadAt == nil) == (b.DeadAt == nil) && a.History == b.History
}

func TestReplayGrantsAFreshBudgetAndKeepsHistory(t *testing.T) {
	st := storetest.Open(t)
	w := seedDeadLetters(t, st)
	ctx := context.Background()
	listener, err := st.ListenJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = listener.Close(context.Background()) }()

	now := time.Now().Add(-time.Second).Truncate(time.Microsecond)
	res, err := st.ReplayDeadLetters(ctx, catalog.DeadLetterFilter{TenantID: "acme", SubscriptionID: w.subA, Reason: "exhausted"}, now, false)
	if err != nil || res != (catalog.ReplayResult{Matched: 2, Replayed: 2}) {
		t.Fatalf("replay = %+v, %v; want 2 of 2", res, err)
	}
	wait, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := listener.Wait(wait); err != nil {
		t.Errorf("no NOTIFY after the replay: %v", err)
	}
	for _, id := range []uuid.UUID{w.a1, w.a3} {
		got := readJob(t, st, id)
		if got.State != "pending" || got.Attempts != 0 || got.Recoveries != 0 || got.DeadReason != nil || got.DeadAt != nil || got.History != 8 {
			t.Errorf("replayed job = %+v; want pending, budget reset, 8 attempts of history", got)
		}
	}
	for _, id := range []uuid.UUID{w.a2, w.b1, w.deleted, w.other} {
		if got := readJob(t, st, id); got.State != "dead" {
			t.Errorf("job outside the filter is %s", got.State)
		}
	}

	// The next attempt continues the numbering instead of colliding with
	// attempt 1 of the history.
	claimed, err := st.Claim(ctx, queue.ClaimRequest{Owner: "w", Limit: 10, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var attempted int
	for _, job := range claimed.Jobs {
		if job.ID != w.a1 && job.ID != w.a3 {
			continue // the pending job seeded beside them
		}
		attempted++
		if job.Attempts != 0 {
			t.Errorf("claimed job has spent %d attempts; want a fresh budget", job.Attempts)
		}
		done, err := st.Complete(ctx, queue.Attempt{JobID: job.ID, SubscriptionID: w.subA, Owner: "w",
			DeliveryID: uuid.Must(uuid.NewV7()), StartedAt: time.Now(), Duration: time.Millisecond,
			Error: "HTTP 500", StatusCode: 500, Retry: queue.Retry{At: time.Now().Add(time.Hour)}}, autoDisableBy(autodisable.Policy{}))
		if err != nil {
			t.Fatal(err)
		}
		if done.Number != 9 {
			t.Errorf("attempt after replay numbered %d, want 9", done.Number)
		}
	}
	if attempted != 2 {
		t.Errorf("claimed %d of the 2 replayed jobs", attempted)
	}
}

func TestReplayIsIdempotentUnderConcurrentCalls(t *testing.T) {
	st := storetest.Open(t)
	sub := seedSubscription(t, st, "acme")
	const jobs = 200
	for n := range jobs {
		deadJob(t, st, "acme", sub, n+1, "exhausted", n, 0)
	}
	ctx := context.Background()
	const callers = 4
	results := make([]catalog.ReplayResult, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			results[i], errs[i] = st.ReplayDeadLetters(ctx, catalog.DeadLetterFilter{TenantID: "acme"}, time.Now(), false)
		})
	}
	wg.Wait()
	var replayed int64
	for i := range callers {
		if err := errs[i]; err != nil {
			t.Fatal(err)
		}
		replayed += results[i].Replayed
	}
	if replayed != jobs {
		t.Errorf("replays put back %d jobs in all (%+v); want each of the %d exactly once", replayed, results, jobs)
	}
	var pending int
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM delivery_jobs WHERE state = 'pending'`).Scan(&pending); err != nil || pending != jobs {
		t.Errorf("%d pending after the replays, %v", pending, err)
	}
}

// autoDisableBy is policy as Complete asks for it, as the dispatcher passes it.
func autoDisableBy(policy autodisable.Policy) queue.AutoDisable {
	return func(span queue.FailureSpan, finished time.Time) (queue.FailureSpan, bool) {
		next, disable := policy.OnFailure(autodisable.Span(span), finished)
		return queue.FailureSpan(next), disable
	}
}
