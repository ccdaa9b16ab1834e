package queue

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/autodisable"
	"github.com/hubctl/hubctl/internal/store/pg"
)

func TestCompleteTransitions(t *testing.T) {
	retryAt := time.Now().Add(time.Minute).Truncate(time.Microsecond)
	cases := []struct {
		name        string
		ok          bool
		retry       Retry
		wantState   string
		wantDead    string
		wantSpan    bool
		wantAttempt string
		wantFolded  bool // the attempt is columns of the job, not a row
	}{
		{name: "success", ok: true, wantState: pg.JobSucceeded, wantAttempt: "succeeded", wantFolded: true},
		{name: "failure retried", retry: Retry{At: retryAt}, wantState: pg.JobPending, wantSpan: true, wantAttempt: "failed"},
		{name: "failure exhausted", retry: Retry{Exhausted: true}, wantState: pg.JobDead, wantDead: pg.DeadExhausted, wantSpan: true, wantAttempt: "failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := ingestStore(t)
			job, sub := claimOne(t, st, "w")
			a := attemptOf(job, "w", tc.ok, 500)
			if tc.ok {
				a.StatusCode = 204
			} else {
				a.Error = "HTTP 500 Internal Server Error"
			}
			a.Retry = tc.retry
			res, err := st.Complete(context.Background(), a, noAutoDisable)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if !res.Owned || res.Number != 1 || res.AutoDisabled || res.Dead != (tc.wantDead != "") {
				t.Errorf("result = %+v", res)
			}
			j := readJob(t, st, job.ID)
			if j.State != tc.wantState || j.Attempts != 1 || j.LeaseOwner != nil || (tc.wantDead != "" && *j.DeadReason != tc.wantDead) {
				t.Errorf("job = %+v, want %s", j, tc.wantState)
			}
			if tc.wantState == pg.JobPending && !j.NextAt.Equal(retryAt) {
				t.Errorf("next attempt at %v, want %v", j.NextAt, retryAt)
			}
			if !tc.ok && (j.LastError == nil || *j.LastError != a.Error || *j.LastStatus != 500) {
				t.Errorf("last error/status = %v/%v", j.LastError, j.LastStatus)
			}
			if span := readSpan(t, st, sub); (span.FailingSince != nil) != tc.wantSpan {
				t.Errorf("span = %+v, want open: %v", span, tc.wantSpan)
			}
			got, folded := readAttempt(t, st, job.ID, 1)
			if folded != tc.wantFolded {
				t.Errorf("attempt folded into the job: %v, want %v", folded, tc.wantFolded)
			}
			want := recordedAttempt{ID: a.DeliveryID, Outcome: tc.wantAttempt, StartedAt: a.StartedAt.Truncate(time.Microsecond),
				Status: a.StatusCode, DurationMS: 12, Error: a.Error, Snippet: "answer"}
			if !got.StartedAt.Equal(want.StartedAt) || got.withoutTime() != want.withoutTime() {
				t.Errorf("attempt = %+v, want %+v", got, want)
			}
		})
	}
}

func TestCompleteSuccessClearsTheFailureSpan(t *testing.T) {
	st := ingestStore(t)
	job, sub := claimOne(t, st, "w")
	if _, err := st.Pool.Exec(context.Background(), `UPDATE subscriptions SET failing_since = now() - interval '1 day', last_failure_at = now() WHERE id = $1`, sub); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Complete(context.Background(), attemptOf(job, "w", true, 200), noAutoDisable); err != nil {
		t.Fatal(err)
	}
	if span := readSpan(t, st, sub); span.FailingSince != nil || span.LastFailureAt != nil {
		t.Errorf("span = %+v, want cleared", span)
	}
}

func TestCompleteAfterTheLeaseWasRecoveredOnlyRecordsTheAttempt(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	job, _ := claimOne(t, st, "old")
	// The lease lapses, the job is recovered and claimed by another owner.
	if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	if rec, err := st.RecoverExpiredLeases(ctx, time.Now(), 5); err != nil || rec.Retried != 1 {
		t.Fatalf("recover = %+v, %v", rec, err)
	}
	if res := claim(t, st, "new", 1, ""); len(res.Jobs) != 1 {
		t.Fatal("the recovered job was not claimable")
	}
	late := attemptOf(job, "old", true, 200)
	res, err := st.Complete(ctx, late, noAutoDisable)
	if err != nil {
		t.Fatal(err)
	}
	if res.Owned || res.Number != 1 {
		t.Errorf("late result = %+v, want not owned, attempt 1", res)
	}
	// A late success moves nothing, so it is no job's to fold: a row.
	if a, folded := readAttempt(t, st, job.ID, 1); folded || a.ID != late.DeliveryID || a.Outcome != "succeeded" || a.Status != 200 {
		t.Errorf("late success = %+v (folded %v), want its own row", a, folded)
	}
	if j := readJob(t, st, job.ID); j.State != pg.JobInFlight || *j.LeaseOwner != "new" || j.Recoveries != 1 {
		t.Errorf("job = %+v, want still in flight under the new owner", j)
	}
	res, err = st.Complete(ctx, attemptOf(job, "new", false, 503), noAutoDisable)
	if err != nil || !res.Owned || res.Number != 2 {
		t.Errorf("new owner's result = %+v, %v; want owned, attempt 2", res, err)
	}
}

func TestCompleteAutoDisables(t *testing.T) {
	cases := []struct {
		name         string
		policy       autodisable.Policy
		failingSince time.Duration // ago
		wantDisabled bool
	}{
		{name: "both gates hold", policy: autodisable.Policy{Enabled: true, Window: time.Hour, Spread: time.Hour}, failingSince: 2 * time.Hour, wantDisabled: true},
		{name: "window not reached", policy: autodisable.Policy{Enabled: true, Window: 3 * time.Hour, Spread: time.Hour}, failingSince: 2 * time.Hour},
		{name: "kill switch", policy: autodisable.Policy{Enabled: false, Window: time.Hour, Spread: time.Hour}, failingSince: 2 * time.Hour},
		{name: "new span", policy: autodisable.Policy{Enabled: true, Window: time.Hour, Spread: time.Hour}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := ingestStore(t)
			ctx := context.Background()
			job, sub := claimOne(t, st, "w")
			queued := insertJobs(t, st, "acme", sub, 3, time.Now().Add(time.Hour))
			if tc.failingSince > 0 {
				if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET failing_since = $2, last_failure_at = $2 WHERE id = $1`,
					sub, time.Now().Add(-tc.failingSince)); err != nil {
					t.Fatal(err)
				}
			}
			a := attemptOf(job, "w", false, 500)
			a.Retry = Retry{At: time.Now().Add(time.Minute)}
			res, err := st.Complete(ctx, a, autoDisableBy(tc.policy))
			if err != nil {
				t.Fatal(err)
			}
			span := readSpan(t, st, sub)
			if res.AutoDisabled != tc.wantDisabled || span.Enabled == tc.wantDisabled {
				t.Fatalf("auto-disabled = %v, enabled = %v; want disabled %v", res.AutoDisabled, span.Enabled, tc.wantDisabled)
			}
			if span.FailingSince == nil || span.LastFailureAt == nil {
				t.Errorf("span = %+v, want open", span)
			}
			wantQueued := pg.JobPending
			if tc.wantDisabled {
				wantQueued = pg.JobDead
				if res.ShedJobs != 4 || *span.DisabledReason != "auto_disabled" {
					t.Errorf("shed %d jobs, reason %v; want 4 (3 queued + the retried one), auto_disabled", res.ShedJobs, span.DisabledReason)
				}
			}
			for _, id := range append(queued, job.ID) {
				if j := readJob(t, st, id); j.State != wantQueued || (tc.wantDisabled && *j.DeadReason != pg.DeadSubscriptionDisabled) {
					t.Errorf("job %s = %+v, want %s", id, j, wantQueued)
				}
			}
		})
	}
}

func TestCompleteSuccessesRecordsABatchInOneGo(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	insertJobs(t, st, "acme", sub, 3, time.Now().Add(-time.Second))
	jobs := claim(t, st, "w", 3, "").Jobs
	if len(jobs) != 3 {
		t.Fatalf("claimed %d jobs, want 3", len(jobs))
	}
	// The third job's lease was lost to another owner: its attempt is
	// recorded but moves nothing. The first job has a late attempt of a
	// former owner beside this one, in the same batch.
	if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET lease_owner = 'other' WHERE id = $1`, jobs[2].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET failing_since = now() - interval '1 hour', last_failure_at = now() - interval '1 minute' WHERE id = $1`, sub); err != nil {
		t.Fatal(err)
	}
	late := attemptOf(jobs[0], "former", true, 200)
	batch := []Attempt{late, attemptOf(jobs[0], "w", true, 204), attemptOf(jobs[1], "w", true, 0), attemptOf(jobs[2], "w", true, 200)}
	batch[2].Response = nil
	res, err := st.CompleteSuccesses(ctx, batch)
	if err != nil {
		t.Fatalf("CompleteSuccesses: %v", err)
	}
	want := []CompleteResult{{Number: 1}, {Number: 2, Owned: true}, {Number: 1, Owned: true}, {Number: 1}}
	if !slices.Equal(res, want) {
		t.Errorf("results = %+v, want %+v", res, want)
	}
	for i, wantState := range []string{pg.JobSucceeded, pg.JobSucceeded, pg.JobInFlight} {
		if j := readJob(t, st, jobs[i].ID); j.State != wantState {
			t.Errorf("job %d = %+v, want %s", i, j, wantState)
		}
	}
	if j := readJob(t, st, jobs[1].ID); j.LastStatus != nil || j.Attempts != 1 {
		t.Errorf("job without a status code = %+v, want no last status, one attempt", j)
	}
	// The owned successes are folded into their jobs, the late ones are
	// rows.
	if n := queryCount(t, st, `SELECT count(*) FROM delivery_attempts`); n != 2 {
		t.Errorf("%d attempt rows, want the 2 late ones", n)
	}
	if a, folded := readAttempt(t, st, jobs[1].ID, 1); !folded || a.Status != 0 || a.Snippet != "" || a.ID != batch[2].DeliveryID {
		t.Errorf("attempt without status and response = %+v (folded %v), want folded with neither", a, folded)
	}
	if span := readSpan(t, st, sub); span.FailingSince != nil {
		t.Errorf("span = %+v, want closed by the successes", span)
	}
}

func TestCompleteSuccessesLeavesASpanWhoseLastFailureCameLater(t *testing.T) {
	st := ingestStore(t)
	job, sub := claimOne(t, st, "w")
	a := attemptOf(job, "w", true, 200)
	a.StartedAt = time.Now().Add(-time.Minute) // finished before the failure below
	if _, err := st.Pool.Exec(context.Background(), `UPDATE subscriptions SET failing_since = now() - interval '1 hour', last_failure_at = now() WHERE id = $1`, sub); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CompleteSuccesses(context.Background(), []Attempt{a}); err != nil {
		t.Fatal(err)
	}
	if span := readSpan(t, st, sub); span.FailingSince == nil {
		t.Error("a success older than the last failure closed the span")
	}
	if j := readJob(t, st, job.ID); j.State != pg.JobSucceeded {
		t.Errorf("job = %+v, want succeeded", j)
	}
}

func TestCompleteSuccessesRejectsFailures(t *testing.T) {
	st := ingestStore(t)
	job, _ := claimOne(t, st, "w")
	if _, err := st.CompleteSuccesses(context.Background(), []Attempt{attemptOf(job, "w", false, 500)}); err == nil {
		t.Error("a failed attempt was recorded as a success")
	}
	if res, err := st.CompleteSuccesses(context.Background(), nil); err != nil || res != nil {
		t.Errorf("empty batch = %v, %v", res, err)
	}
}

func TestRoundsOfDistinctJobs(t *testing.T) {
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	cases := []struct {
		name string
		jobs []uuid.UUID
		want [][]int
	}{
		{name: "distinct jobs share one round", jobs: []uuid.UUID{a, b, c}, want: [][]int{{0, 1, 2}}},
		{name: "a repeated job goes to the next round", jobs: []uuid.UUID{a, b, a, a}, want: [][]int{{0, 1}, {2}, {3}}},
		{name: "nothing", want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			attempts := make([]Attempt, len(tc.jobs))
			for i, id := range tc.jobs {
				attempts[i].JobID = id
			}
			got := roundsOfDistinctJobs(attempts)
			if !slices.EqualFunc(got, tc.want, slices.Equal[[]int]) {
				t.Errorf("rounds = %v, want %v", got, tc.want)
			}
		})
	}
}

// A recorder whose commit went through but whose answer was lost with the
// connection tries again with the same attempts: the retry finds them
// recorded, changes nothing and says so, instead of failing on the
// attempts' primary key.
func TestRecordingAgainAfterALostCommitAnswerFindsTheAttemptsRecorded(t *testing.T) {
	ctx := context.Background()
	t.Run("successes", func(t *testing.T) {
		st := ingestStore(t)
		sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
		insertJobs(t, st, "acme", sub, 2, time.Now().Add(-time.Second))
		jobs := claim(t, st, "w", 2, "").Jobs
		batch := []Attempt{attemptOf(jobs[0], "w", true, 200), attemptOf(jobs[1], "w", true, 204)}
		if _, err := st.CompleteSuccesses(ctx, batch); err != nil {
			t.Fatal(err)
		}
		res, err := st.CompleteSuccesses(ctx, batch)
		if err != nil {
			t.Fatalf("the retry failed: %v", err)
		}
		want := []CompleteResult{{Number: 1, AlreadyRecorded: true}, {Number: 1, AlreadyRecorded: true}}
		if !slices.Equal(res, want) {
			t.Errorf("retry's results = %+v, want %+v", res, want)
		}
		for _, job := range jobs {
			if j := readJob(t, st, job.ID); j.State != pg.JobSucceeded || j.Attempts != 1 {
				t.Errorf("job = %+v, want succeeded after one attempt", j)
			}
		}
		if n := queryCount(t, st, `SELECT count(*) FROM delivery_attempts`); n != 0 {
			t.Errorf("%d attempt rows, want none: both successes are folded into their jobs", n)
		}
		for i, job := range jobs {
			if a, folded := readAttempt(t, st, job.ID, 1); !folded || a.ID != batch[i].DeliveryID {
				t.Errorf("job %d's attempt = %+v (folded %v), want %s folded", i, a, folded, batch[i].DeliveryID)
			}
		}
		// An attempt never recorded beside one that was is no retry of
		// one transaction: that stays the conflict it is.
		third := attemptOf(jobs[0], "w", true, 200)
		if _, err := st.CompleteSuccesses(ctx, []Attempt{batch[0], third}); !errors.Is(err, pg.ErrConflict) {
			t.Errorf("a recorded attempt beside a new one: %v, want a conflict", err)
		}
	})
	t.Run("a folded success beside a late one", func(t *testing.T) {
		st := ingestStore(t)
		sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
		insertJobs(t, st, "acme", sub, 2, time.Now().Add(-time.Second))
		jobs := claim(t, st, "w", 2, "").Jobs
		// The second job's lease went to another owner: its success is a
		// row, the first one's is folded into its job.
		if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET lease_owner = 'other' WHERE id = $1`, jobs[1].ID); err != nil {
			t.Fatal(err)
		}
		batch := []Attempt{attemptOf(jobs[0], "w", true, 200), attemptOf(jobs[1], "w", true, 204)}
		if res, err := st.CompleteSuccesses(ctx, batch); err != nil || !res[0].Owned || res[1].Owned {
			t.Fatalf("CompleteSuccesses = %+v, %v; want the first owned, the second late", res, err)
		}
		res, err := st.CompleteSuccesses(ctx, batch)
		want := []CompleteResult{{Number: 1, AlreadyRecorded: true}, {Number: 1, AlreadyRecorded: true}}
		if err != nil || !slices.Equal(res, want) {
			t.Errorf("retry's results = %+v, %v; want %+v", res, err, want)
		}
		for i, wantFolded := range []bool{true, false} {
			if a, folded := readAttempt(t, st, jobs[i].ID, 1); folded != wantFolded || a.ID != batch[i].DeliveryID {
				t.Errorf("job %d's attempt = %+v (folded %v), want %s once, folded %v", i, a, folded, batch[i].DeliveryID, wantFolded)
			}
		}
	})
	t.Run("failure", func(t *testing.T) {
		st := ingestStore(t)
		job, _ := claimOne(t, st, "w")
		a := attemptOf(job, "w", false, 503)
		a.Error, a.Retry = "HTTP 503", Retry{At: time.Now().Add(time.Minute)}
		if res, err := st.Complete(ctx, a, noAutoDisable); err != nil || !res.Owned {
			t.Fatalf("Complete = %+v, %v", res, err)
		}
		res, err := st.Complete(ctx, a, noAutoDisable)
		if err != nil || res != (CompleteResult{Number: 1, AlreadyRecorded: true}) {
			t.Fatalf("the retry = %+v, %v; want attempt 1 already recorded", res, err)
		}
		if j := readJob(t, st, job.ID); j.State != pg.JobPending || j.Attempts != 1 {
			t.Errorf("job = %+v, want pending after one attempt", j)
		}
	})
}

// A job deleted by its tenant's purge while its attempt was under way is
// gone: recording the attempt writes nothing and is no error, in a batch
// beside other jobs' successes (recorded as ever) or alone as a failure.
func TestRecordingAnAttemptOfAPurgedJobWritesNothing(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	insertJobs(t, st, "acme", sub, 3, time.Now().Add(-time.Second))
	jobs := claim(t, st, "w", 3, "").Jobs
	if len(jobs) != 3 {
		t.Fatalf("claimed %d jobs, want 3", len(jobs))
	}
	if _, err := st.Pool.Exec(ctx, `DELETE FROM delivery_jobs WHERE id = ANY($1)`, []uuid.UUID{jobs[0].ID, jobs[2].ID}); err != nil {
		t.Fatal(err)
	}
	res, err := st.CompleteSuccesses(ctx, []Attempt{attemptOf(jobs[0], "w", true, 200), attemptOf(jobs[1], "w", true, 200)})
	if err != nil {
		t.Fatalf("CompleteSuccesses: %v", err)
	}
	if want := []CompleteResult{{Gone: true}, {Number: 1, Owned: true}}; !slices.Equal(res, want) {
		t.Errorf("results = %+v, want %+v", res, want)
	}
	failed, err := st.Complete(ctx, attemptOf(jobs[2], "w", false, 500), noAutoDisable)
	if err != nil || failed != (CompleteResult{Gone: true}) {
		t.Errorf("Complete of a purged job's failure = %+v, %v; want gone, no error", failed, err)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM delivery_attempts WHERE job_id <> $1`, jobs[1].ID); n != 0 {
		t.Errorf("%d attempts recorded of purged jobs", n)
	}
}

// recordedAttempt is an attempt as recorded: a delivery_attempts row or,
// for a success that moved its job, columns of the job (migration 24).
type recordedAttempt struct {
	ID         uuid.UUID
	Outcome    string
	StartedAt  time.Time
	DurationMS int
	Status     int // 0 for none
	Error      string
	Snippet    string
}

// withoutTime is a with its start cleared, to compare the rest with ==
// (a time read back has another location).
func (a recordedAttempt) withoutTime() recordedAttempt {
	a.StartedAt = time.Time{}
	return a
}

// readAttempt reads attempt number of job, and whether it is folded into
// the job rather than a row. It fails the test when the attempt is both or
// neither.
func readAttempt(t *testing.T, st *testStore, job uuid.UUID, number int) (recordedAttempt, bool) {
	t.Helper()
	var (
		a              recordedAttempt
		folded         bool
		status         *int
		errText, reply *string
	)
	rows, err := st.Pool.Query(context.Background(), `
SELECT id, outcome, started_at, duration_ms, status_code, error, convert_from(response_snippet, 'UTF8'), false
FROM delivery_attempts WHERE job_id = $1 AND attempt = $2
UNION ALL
SELECT succeeded_attempt_id, 'succeeded', succeeded_started_at, succeeded_duration_ms, last_status, succeeded_error,
       convert_from(succeeded_response, 'UTF8'), true
FROM delivery_jobs WHERE id = $1 AND succeeded_attempt = $2`, job, number)
	if err != nil {
		t.Fatalf("read attempt %d of job %s: %v", number, job, err)
	}
	var n int
	_, err = pgx.ForEachRow(rows, []any{&a.ID, &a.Outcome, &a.StartedAt, &a.DurationMS, &status, &errText, &reply, &folded}, func() error {
		n++
		return nil
	})
	if err != nil || n != 1 {
		t.Fatalf("attempt %d of job %s recorded %d times (%v), want once", number, job, n, err)
	}
	a.Status, a.Error, a.Snippet = pg.ValueOrZero(status), pg.ValueOrZero(errText), pg.ValueOrZero(reply)
	return a, folded
}
