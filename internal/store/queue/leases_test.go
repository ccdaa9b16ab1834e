package queue

import (
	"context"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store/pg"
)

func TestShedKeepsTheAttemptBudget(t *testing.T) {
	st := ingestStore(t)
	job, _ := claimOne(t, st, "w")
	retryAt := time.Now().Add(30 * time.Second).Truncate(time.Microsecond)
	if ok, err := st.Shed(context.Background(), job.ID, "someone-else", retryAt, "breaker_open"); err != nil || ok {
		t.Errorf("shed by another owner = %v, %v; want refused", ok, err)
	}
	if ok, err := st.Shed(context.Background(), job.ID, "w", retryAt, "breaker_open"); err != nil || !ok {
		t.Fatalf("Shed = %v, %v", ok, err)
	}
	j := readJob(t, st, job.ID)
	if j.State != pg.JobPending || j.Attempts != 0 || !j.NextAt.Equal(retryAt) || j.LeaseOwner != nil {
		t.Errorf("job = %+v, want pending at %v with no attempt spent", j, retryAt)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM delivery_attempts`); n != 0 {
		t.Errorf("%d attempts recorded, want none", n)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM delivery_jobs WHERE shed_reason = 'breaker_open' AND shed_at IS NOT NULL`); n != 1 {
		t.Errorf("%d jobs say why they were shed, want 1", n)
	}
	// The next claim takes the reason away: the job is being attempted.
	if _, err := st.Pool.Exec(context.Background(), `UPDATE delivery_jobs SET next_attempt_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if res := claim(t, st, "w", 10, ""); len(res.Jobs) != 1 {
		t.Fatalf("claimed %d jobs, want the shed one", len(res.Jobs))
	}
	if n := queryCount(t, st, `SELECT count(*) FROM delivery_jobs WHERE shed_reason IS NOT NULL OR shed_at IS NOT NULL`); n != 0 {
		t.Errorf("%d claimed jobs still say they were shed", n)
	}
}

func TestRecoverExpiredLeasesPoisonsAtTheThreshold(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	job, _ := claimOne(t, st, "w")
	const threshold = 3
	// Recovered threshold times, then dead on the next expiry.
	for i := 1; i <= threshold+1; i++ {
		if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, job.ID); err != nil {
			t.Fatal(err)
		}
		rec, err := st.RecoverExpiredLeases(ctx, time.Now(), threshold)
		if err != nil {
			t.Fatal(err)
		}
		j := readJob(t, st, job.ID)
		if i <= threshold {
			if rec != (Recovered{Retried: 1}) || j.State != pg.JobPending || j.Recoveries != i {
				t.Fatalf("recovery %d: %+v, job %+v; want pending with %d recoveries", i, rec, j, i)
			}
			if res := claim(t, st, "w", 1, ""); len(res.Jobs) != 1 {
				t.Fatalf("recovery %d: job not claimable again", i)
			}
			continue
		}
		if rec != (Recovered{Poisoned: 1}) || j.State != pg.JobDead || *j.DeadReason != pg.DeadPoison || j.Recoveries != threshold {
			t.Errorf("last recovery: %+v, job %+v; want dead poison", rec, j)
		}
	}
	// A live lease is left alone.
	live, _ := claimOne(t, st, "w")
	if rec, err := st.RecoverExpiredLeases(ctx, time.Now(), threshold); err != nil || rec != (Recovered{}) {
		t.Errorf("recover with only a live lease = %+v, %v", rec, err)
	}
	if j := readJob(t, st, live.ID); j.State != pg.JobInFlight {
		t.Errorf("live job = %+v", j)
	}
}

func TestReleaseHandsJobsBackWithoutSpendingAnything(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	due := time.Now().Add(-time.Second).Truncate(time.Microsecond)
	insertJobs(t, st, "acme", sub, 2, due)
	jobs := claim(t, st, "w", 2, "").Jobs
	if n, err := st.Release(ctx, "someone-else", jobIDs(jobs)); err != nil || n != 0 {
		t.Errorf("release by another owner = %d, %v; want nothing released", n, err)
	}
	if n, err := st.Release(ctx, "w", jobIDs(jobs)); err != nil || n != 2 {
		t.Fatalf("Release = %d, %v; want 2", n, err)
	}
	for _, job := range jobs {
		if j := readJob(t, st, job.ID); j.State != pg.JobPending || j.Attempts != 0 || j.Recoveries != 0 || j.LeaseOwner != nil || !j.NextAt.Equal(due) {
			t.Errorf("job = %+v, want pending as it was", j)
		}
	}
	if n, err := st.Release(ctx, "w", nil); err != nil || n != 0 {
		t.Errorf("Release of nothing = %d, %v", n, err)
	}
}
