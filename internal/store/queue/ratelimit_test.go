package queue

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
)

func setRateLimit(t *testing.T, st *testStore, sub string, perSecond float64) {
	t.Helper()
	if _, err := st.Pool.Exec(context.Background(), `UPDATE subscriptions SET rate_limit = $2 WHERE id = $1`, sub, perSecond); err != nil {
		t.Fatal(err)
	}
}

func claimAt(t *testing.T, st *testStore, now time.Time, limit int) ClaimResult {
	t.Helper()
	res, err := st.Claim(context.Background(), ClaimRequest{Owner: "w", Limit: limit, Now: now, LeaseMargin: testLeaseMargin})
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	return res
}

func TestClaimGivesRateLimitedJobsSlotsWithoutAnAttempt(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	limited := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	setRateLimit(t, st, limited, 10)
	free := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	t0 := time.Now()
	ids := insertJobs(t, st, "acme", limited, 5, t0.Add(-time.Second))
	insertJobs(t, st, "acme", free, 5, t0.Add(-time.Second))

	// The first claim sends one job of the limited subscription now and
	// gives the others the next slots, 100 ms apart; the unlimited
	// subscription's jobs all go.
	res := claimAt(t, st, t0, 20)
	if len(res.Jobs) != 6 || res.RateLimited != 4 {
		t.Fatalf("claimed %d jobs, %d rate limited; want 6 and 4", len(res.Jobs), res.RateLimited)
	}
	for i, id := range ids[1:] {
		row := readJob(t, st, id)
		want := t0.Add(time.Duration(i+1) * 100 * time.Millisecond)
		if row.State != pg.JobPending || row.Attempts != 0 || row.NextAt.Sub(want).Abs() > time.Millisecond {
			t.Errorf("job %d = %+v, want pending, no attempt, due at %v", i+1, row, want)
		}
		var reason *string
		if err := st.Pool.QueryRow(ctx, `SELECT shed_reason FROM delivery_jobs WHERE id = $1`, id).Scan(&reason); err != nil || reason == nil || *reason != pg.ShedRateLimited {
			t.Errorf("job %d held reason = %v, %v", i+1, reason, err)
		}
	}
	var attempts int
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM delivery_attempts`).Scan(&attempts); err != nil || attempts != 0 {
		t.Errorf("attempts recorded = %d, %v; want none", attempts, err)
	}

	// 250 ms later the two slots that have come go, holding the slot they
	// were given: no new slots are taken, so the limiter's end is where the
	// first claim left it.
	if res := claimAt(t, st, t0.Add(250*time.Millisecond), 20); len(res.Jobs) != 2 || res.RateLimited != 0 ||
		res.Jobs[0].ID != ids[1] || res.Jobs[1].ID != ids[2] {
		t.Errorf("second claim = %v (%d rate limited), want %v", jobIDs(res.Jobs), res.RateLimited, ids[1:3])
	}
	rate, err := st.SubscriptionRate(ctx, uuid.MustParse(limited), t0.Add(250*time.Millisecond))
	if err != nil || !rate.Throttled || rate.Next.Sub(t0.Add(500*time.Millisecond)).Abs() > time.Millisecond {
		t.Errorf("rate = %+v, %v; want throttled until %v", rate, err, t0.Add(500*time.Millisecond))
	}

	// Changing the limit forgets the slots: the waiting jobs are due now,
	// to be given slots at the new rate.
	if _, err := st.UpdateSubscription(ctx, "acme", uuid.MustParse(limited), time.Now(), func(s *catalog.Subscription) error {
		s.RateLimit = 1000
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if res := claimAt(t, st, time.Now(), 20); len(res.Jobs) != 1 || res.RateLimited != 1 {
		t.Errorf("claim after the change = %d jobs, %d rate limited; want 1 and 1 (1 ms apart)", len(res.Jobs), res.RateLimited)
	}
}
