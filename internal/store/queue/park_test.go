package queue

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// parked reports which of ids are parked (pending, due at infinity).
func parkedOf(t *testing.T, st *testStore, ids ...uuid.UUID) []bool {
	t.Helper()
	out := make([]bool, len(ids))
	for i, id := range ids {
		if err := st.Pool.QueryRow(context.Background(),
			`SELECT state = 'pending' AND next_attempt_at = 'infinity' FROM delivery_jobs WHERE id = $1`, id).Scan(&out[i]); err != nil {
			t.Fatalf("read job %s: %v", id, err)
		}
	}
	return out
}

func wantParked(t *testing.T, st *testStore, what string, ids []uuid.UUID, want ...bool) {
	t.Helper()
	if got := parkedOf(t, st, ids...); !slices.Equal(got, want) {
		t.Errorf("%s: parked %v, want %v", what, got, want)
	}
}

func claimedIDs(t *testing.T, st *testStore) []uuid.UUID {
	t.Helper()
	return jobIDs(claim(t, st, "w", 20, "").Jobs)
}

func sameIDs(got []uuid.UUID, want ...uuid.UUID) bool {
	sortIDs := func(ids []uuid.UUID) {
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	}
	got, want = slices.Clone(got), slices.Clone(want)
	sortIDs(got)
	sortIDs(want)
	return slices.Equal(got, want)
}

func TestAClaimParksTheJobsBehindAKeyAndLaterClaimsWalkNoneOfThem(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	ids := insertKeyedJobs(t, st, "acme", sub, []string{"a", "a", "", "a", "b", "a"})
	a1, a2, free, a3, b1, a4 := ids[0], ids[1], ids[2], ids[3], ids[4], ids[5]

	res := claim(t, st, "w", 20, "")
	if !sameIDs(jobIDs(res.Jobs), a1, free, b1) || res.Parked != 3 {
		t.Fatalf("first claim took %v and parked %d; want a1, the unkeyed job and b1, and 3 parked", jobIDs(res.Jobs), res.Parked)
	}
	byID := map[uuid.UUID]ClaimedJob{}
	for _, j := range res.Jobs {
		byID[j.ID] = j
	}
	wantParked(t, st, "after the first claim", []uuid.UUID{a2, a3, a4}, true, true, true)
	// The parked jobs are out of the walk: the next claim has nothing to
	// look at, and parks nothing again.
	if res := claim(t, st, "w", 20, ""); len(res.Jobs) != 0 || res.Parked != 0 {
		t.Fatalf("second claim took %d and parked %d; want nothing", len(res.Jobs), res.Parked)
	}
	// A delivery read shows a parked job due at no known time.
	deliveries, _, err := st.ListDeliveries(ctx, catalog.DeliveryQuery{TenantID: "acme", SubscriptionID: uuid.MustParse(sub), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deliveries {
		if parked := d.ID == a2 || d.ID == a3 || d.ID == a4; parked != (d.NextAttemptAt == nil) || d.State != pg.JobPending && d.State != pg.JobInFlight {
			t.Errorf("delivery %s: state %s, next attempt %v", d.ID, d.State, d.NextAttemptAt)
		}
	}

	// The head's success releases the next job alone, due since it was
	// created (ahead of newer jobs of its tenant).
	complete(t, st, byID[a1], "w", true, Retry{})
	wantParked(t, st, "after a1 succeeded", []uuid.UUID{a2, a3, a4}, false, true, true)
	if row := readJob(t, st, a2); row.NextAt.After(time.Now()) {
		t.Errorf("released a2 due at %v, want due already", row.NextAt)
	}
	if got := claimedIDs(t, st); !sameIDs(got, a2) {
		t.Fatalf("claimed %v after a1 succeeded, want a2", got)
	}
}

// headOf claims the head of a key of three jobs (the other two parked)
// and returns the claimed head and the two behind it.
func headOf(t *testing.T, st *testStore, sub string) (ClaimedJob, []uuid.UUID) {
	t.Helper()
	ids := insertKeyedJobs(t, st, "acme", sub, []string{"k", "k", "k"})
	res := claim(t, st, "w", 20, "")
	if len(res.Jobs) != 1 || res.Jobs[0].ID != ids[0] {
		t.Fatalf("claimed %v, want the head %s", jobIDs(res.Jobs), ids[0])
	}
	wantParked(t, st, "behind the claimed head", ids[1:], true, true)
	return res.Jobs[0], ids[1:]
}

func expireLease(t *testing.T, st *testStore, id uuid.UUID, recoveries int) {
	t.Helper()
	if _, err := st.Pool.Exec(context.Background(),
		`UPDATE delivery_jobs SET lease_until = now() - interval '1 second', recoveries = $2 WHERE id = $1`, id, recoveries); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecoverExpiredLeases(context.Background(), time.Now(), 3); err != nil {
		t.Fatal(err)
	}
}

// TestEveryWayAHeadEndsReleasesTheNextJobOfItsKey ends the head of a key
// each way a job can end or go back, and checks that exactly the next job
// of the key becomes claimable, or, where the head still holds the key,
// that nothing is.
func TestEveryWayAHeadEndsReleasesTheNextJobOfItsKey(t *testing.T) {
	tests := []struct {
		name string
		end  func(t *testing.T, st *testStore, sub string, head ClaimedJob)
		// next is what the next claim takes: the head again or the job
		// behind it.
		headAgain bool
	}{
		{"succeeded", func(t *testing.T, st *testStore, _ string, head ClaimedJob) {
			complete(t, st, head, "w", true, Retry{})
		}, false},
		{"dead, attempts exhausted", func(t *testing.T, st *testStore, _ string, head ClaimedJob) {
			complete(t, st, head, "w", false, Retry{Exhausted: true})
		}, false},
		{"failed, retried at once", func(t *testing.T, st *testStore, _ string, head ClaimedJob) {
			complete(t, st, head, "w", false, Retry{At: time.Now().Add(-time.Millisecond)})
		}, true},
		{"lease recovered", func(t *testing.T, st *testStore, _ string, head ClaimedJob) {
			expireLease(t, st, head.ID, 0)
		}, true},
		{"lease recovered as poison", func(t *testing.T, st *testStore, _ string, head ClaimedJob) {
			expireLease(t, st, head.ID, 3)
		}, false},
		{"shed by a breaker", func(t *testing.T, st *testStore, _ string, head ClaimedJob) {
			if ok, err := st.Shed(context.Background(), head.ID, "w", time.Now().Add(-time.Millisecond), "breaker_open"); err != nil || !ok {
				t.Fatalf("shed = %v, %v", ok, err)
			}
		}, true},
		{"handed back unstarted", func(t *testing.T, st *testStore, _ string, head ClaimedJob) {
			if n, err := st.Release(context.Background(), "w", []uuid.UUID{head.ID}); err != nil || n != 1 {
				t.Fatalf("release = %d, %v", n, err)
			}
		}, true},
		{"settled at claim: subscription disabled", func(t *testing.T, st *testStore, sub string, head ClaimedJob) {
			complete(t, st, head, "w", false, Retry{At: time.Now().Add(-time.Millisecond)})
			if _, err := st.Pool.Exec(context.Background(), `UPDATE subscriptions SET enabled = false WHERE id = $1`, sub); err != nil {
				t.Fatal(err)
			}
			if res := claim(t, st, "w", 20, ""); res.Disabled != 1 {
				t.Fatalf("claim settled %d as subscription_disabled, want the head", res.Disabled)
			}
			if _, err := st.Pool.Exec(context.Background(), `UPDATE subscriptions SET enabled = true WHERE id = $1`, sub); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"settled at claim: event missing", func(t *testing.T, st *testStore, _ string, head ClaimedJob) {
			complete(t, st, head, "w", false, Retry{At: time.Now().Add(-time.Millisecond)})
			if _, err := st.Pool.Exec(context.Background(), `DELETE FROM events WHERE seq = $1`, head.Event.Seq); err != nil {
				t.Fatal(err)
			}
			if res := claim(t, st, "w", 20, ""); res.Orphaned != 1 {
				t.Fatalf("claim settled %d as poison, want the head", res.Orphaned)
			}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := ingestStore(t)
			sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
			head, behind := headOf(t, st, sub)
			tt.end(t, st, sub, head)
			want := behind[0]
			if tt.headAgain {
				want = head.ID
				wantParked(t, st, "while the head holds its key", behind, true, true)
			} else {
				wantParked(t, st, "once the head ended", behind, false, true)
			}
			if got := claimedIDs(t, st); !sameIDs(got, want) {
				t.Errorf("next claim took %v, want %v", got, want)
			}
			wantParked(t, st, "after the next claim", behind[1:], true)
			if n, err := st.ReleaseStrandedKeys(context.Background(), time.Now()); err != nil || n != 0 {
				t.Errorf("sweep released %d, %v; want nothing left to release", n, err)
			}
		})
	}
}

// TestAReplayedDeadLetterParkedBehindTheJobInFlightGoesWhenThatJobGoesBack:
// a replayed dead letter is older than the job of its key in flight, so it
// is parked until that job ends or goes back to pending; then it is the
// key's head, and the job that went back waits behind it.
func TestAReplayedDeadLetterParkedBehindTheJobInFlightGoesWhenThatJobGoesBack(t *testing.T) {
	backs := []struct {
		name string
		back func(t *testing.T, st *testStore, job ClaimedJob)
	}{
		{"retry", func(t *testing.T, st *testStore, job ClaimedJob) {
			complete(t, st, job, "w", false, Retry{At: time.Now().Add(-time.Millisecond)})
		}},
		{"lease recovered", func(t *testing.T, st *testStore, job ClaimedJob) { expireLease(t, st, job.ID, 0) }},
		{"shed", func(t *testing.T, st *testStore, job ClaimedJob) {
			if _, err := st.Shed(context.Background(), job.ID, "w", time.Now().Add(-time.Millisecond), "breaker_open"); err != nil {
				t.Fatal(err)
			}
		}},
		{"handed back", func(t *testing.T, st *testStore, job ClaimedJob) {
			if _, err := st.Release(context.Background(), "w", []uuid.UUID{job.ID}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range backs {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := ingestStore(t)
			ctx := context.Background()
			sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
			head, behind := headOf(t, st, sub)
			complete(t, st, head, "w", false, Retry{Exhausted: true})
			second := claim(t, st, "w", 20, "").Jobs
			if len(second) != 1 || second[0].ID != behind[0] {
				t.Fatalf("claimed %v, want %s", jobIDs(second), behind[0])
			}
			if res, err := st.ReplayDeadLetters(ctx, catalog.DeadLetterFilter{TenantID: "acme"}, time.Now(), false); err != nil || res.Replayed != 1 {
				t.Fatalf("replay = %+v, %v", res, err)
			}
			if res := claim(t, st, "w", 20, ""); len(res.Jobs) != 0 || res.Parked != 1 {
				t.Fatalf("claim with the replay behind a job in flight took %v, parked %d; want it parked", jobIDs(res.Jobs), res.Parked)
			}
			wantParked(t, st, "replayed head", []uuid.UUID{head.ID}, true)

			tt.back(t, st, second[0])
			if got := claimedIDs(t, st); !sameIDs(got, head.ID) {
				t.Fatalf("claimed %v once the job in flight went back, want the replayed head", got)
			}
			wantParked(t, st, "the job that went back and the last", behind, true, true)
		})
	}
}

func TestDeletingTheSubscriptionCancelsItsParkedJobs(t *testing.T) {
	st := ingestStore(t)
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	head, behind := headOf(t, st, sub)
	n, err := st.DeleteSubscription(context.Background(), "acme", uuid.MustParse(sub), time.Now())
	if err != nil || n != 2 {
		t.Fatalf("delete canceled %d, %v; want the 2 parked", n, err)
	}
	complete(t, st, head, "w", true, Retry{})
	var canceled int
	if err := st.Pool.QueryRow(context.Background(), `SELECT count(*) FROM delivery_jobs WHERE id = ANY($1) AND state = 'canceled'`,
		behind).Scan(&canceled); err != nil || canceled != 2 {
		t.Errorf("%d of the parked jobs canceled, %v; want both", canceled, err)
	}
}

// TestTheSweepReleasesOnlyKeysWhoseLiveJobsAreAllParked strands keys the
// ways a missed release would leave them, and checks the sweep releases
// their heads and nothing that something else will release.
func TestTheSweepReleasesOnlyKeysWhoseLiveJobsAreAllParked(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	other := addTestSubscription(t, st, "zeta", "webhook", []string{"*"})
	// held: a head in flight and two parked behind it.
	// stranded: three parked, nothing ahead.
	// retrying: a head waiting for its retry, one parked behind it.
	// blocked by flight: the key's oldest job parked, a later one in flight.
	held := insertKeyedJobs(t, st, "acme", sub, []string{"held", "held", "held"})
	stranded := insertKeyedJobs(t, st, "acme", sub, []string{"stranded", "stranded", "stranded"})
	retrying := insertKeyedJobs(t, st, "zeta", other, []string{"retrying", "retrying"})
	flight := insertKeyedJobs(t, st, "zeta", other, []string{"flight", "flight"})
	park := func(ids ...uuid.UUID) {
		t.Helper()
		if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET next_attempt_at = 'infinity' WHERE id = ANY($1)`, ids); err != nil {
			t.Fatal(err)
		}
	}
	set := func(sql string, id uuid.UUID) {
		t.Helper()
		if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET `+sql+` WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
	set(`state = 'in_flight', lease_owner = 'w', lease_until = now() + interval '1 hour'`, held[0])
	park(held[1], held[2])
	park(stranded...)
	set(`attempts = 1, next_attempt_at = now() + interval '1 hour'`, retrying[0])
	park(retrying[1])
	park(flight[0])
	set(`state = 'in_flight', lease_owner = 'w', lease_until = now() + interval '1 hour'`, flight[1])

	n, err := st.ReleaseStrandedKeys(ctx, time.Now())
	if err != nil || n != 1 {
		t.Fatalf("sweep released %d, %v; want the stranded key's head", n, err)
	}
	wantParked(t, st, "stranded key", stranded, false, true, true)
	wantParked(t, st, "held key", held[1:], true, true)
	wantParked(t, st, "retrying key", retrying[1:], true)
	wantParked(t, st, "key with a job in flight", flight[:1], true)
	if n, err := st.ReleaseStrandedKeys(ctx, time.Now()); err != nil || n != 0 {
		t.Errorf("second sweep released %d, %v; want nothing", n, err)
	}
}

// TestAClaimParksNothingBehindAHeadWhoseEndIsUncommitted: the claim reads
// its blocker's newest version under a lock, so a head whose transition
// has not committed yet (its row locked) keeps the claim from parking the
// job behind it: parked then, it would miss the release that transition
// makes.
func TestAClaimParksNothingBehindAHeadWhoseEndIsUncommitted(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	ids := insertKeyedJobs(t, st, "acme", sub, []string{"k", "k"})
	if res := claim(t, st, "w", 1, ""); len(res.Jobs) != 1 || res.Jobs[0].ID != ids[0] {
		t.Fatalf("claimed %v, want the head alone", jobIDs(res.Jobs))
	}
	tx, err := st.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `UPDATE delivery_jobs SET state = 'succeeded', lease_owner = NULL, lease_until = NULL WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if res := claim(t, st, "w", 20, ""); len(res.Jobs) != 0 || res.Parked != 0 {
		t.Fatalf("claim during the head's transition took %v and parked %d; want neither", jobIDs(res.Jobs), res.Parked)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := claimedIDs(t, st); !sameIDs(got, ids[1]) {
		t.Errorf("claimed %v once the head's end committed, want the next job", got)
	}
}

// TestAnOrderedRateLimitedKeyTakesOneSlotPerJob: a job parked and released
// takes its slot when it is next claimed, never one while parked.
func TestAnOrderedRateLimitedKeyTakesOneSlotPerJob(t *testing.T) {
	st := ingestStore(t)
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	setRateLimit(t, st, sub, 1)
	ids := insertKeyedJobs(t, st, "acme", sub, []string{"k", "k", "k"})
	t0 := time.Now()
	first := claimAt(t, st, t0, 20)
	if len(first.Jobs) != 1 || first.Parked != 2 || first.RateLimited != 0 {
		t.Fatalf("first claim: %d jobs, %d parked, %d rate limited; want 1, 2, 0", len(first.Jobs), first.Parked, first.RateLimited)
	}
	complete(t, st, first.Jobs[0], "w", true, Retry{})
	// The next job is released and given the next slot, a second on.
	if res := claimAt(t, st, t0.Add(10*time.Millisecond), 20); len(res.Jobs) != 0 || res.RateLimited != 1 {
		t.Fatalf("claim after the head: %d jobs, %d rate limited; want the next job held for its slot", len(res.Jobs), res.RateLimited)
	}
	if row := readJob(t, st, ids[1]); row.NextAt.Sub(t0.Add(time.Second)).Abs() > time.Millisecond {
		t.Errorf("next job due at %v, want its slot at %v", row.NextAt, t0.Add(time.Second))
	}
	wantParked(t, st, "last job", ids[2:], true)
	if res := claimAt(t, st, t0.Add(time.Second), 20); len(res.Jobs) != 1 || res.Jobs[0].ID != ids[1] || res.RateLimited != 0 {
		t.Fatalf("claim at the slot: %v, %d rate limited; want the next job, on the slot it holds", jobIDs(res.Jobs), res.RateLimited)
	}
}
