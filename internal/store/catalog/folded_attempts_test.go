package catalog_test

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/autodisable"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

// foldedStep is one attempt a test records through the queue: by the
// job's owner, or late, by a former owner whose lease was lost.
type foldedStep struct {
	ok   bool
	late bool
}

// A success recorded by the job's owner is folded into the job (migration
// 24) instead of an attempt row; failures and late results stay rows.
// Every reader gives what it gave when every attempt was a row: the
// attempts of the delivery and of its event, in order and field by field,
// the lookup by X-Lerian-Delivery-Id and the latency chart, before and
// after the folded attempts are moved back into rows (as migration 24's
// down does).
func TestFoldedSuccessReadsAsItsAttemptRowDid(t *testing.T) {
	cases := []struct {
		name     string
		steps    []foldedStep
		wantRows int // delivery_attempts rows
		wantJob  string
	}{
		{name: "owned success", steps: []foldedStep{{ok: true}}, wantRows: 0, wantJob: "succeeded"},
		{name: "late success", steps: []foldedStep{{ok: true, late: true}}, wantRows: 1, wantJob: "in_flight"},
		{name: "retried until it succeeds", steps: []foldedStep{{}, {}, {ok: true}}, wantRows: 2, wantJob: "succeeded"},
		{name: "late success after the owner's", steps: []foldedStep{{ok: true}, {ok: true, late: true}}, wantRows: 1, wantJob: "succeeded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := storetest.Open(t)
			ctx := context.Background()
			sub := seedSubscription(t, st, "acme")
			job, seq := seedDelivery(t, st, "acme", sub, 1, "pending")

			var want []catalog.DeliveryAttempt
			start := time.Now().Add(-time.Hour).Truncate(time.Microsecond)
			for i, step := range tc.steps {
				a := queue.Attempt{JobID: job, SubscriptionID: sub, Owner: "w", DeliveryID: uuid.Must(uuid.NewV7()),
					StartedAt: start.Add(time.Duration(i) * time.Minute), Duration: time.Duration(10+i)*time.Millisecond + 300*time.Microsecond,
					OK: step.ok, StatusCode: 503, Error: "HTTP 503", Response: []byte("busy"), Retry: queue.Retry{At: time.Now().Add(-time.Second)}}
				if step.ok {
					a.StatusCode, a.Error, a.Response = 200, "", []byte(`{"ok":true}`)
				}
				if step.late {
					// A former owner whose lease went to "w": its result is late.
					a.Owner = "former"
				}
				if j := readJob(t, st, job); j.State == "pending" {
					claimed, err := st.Claim(ctx, queue.ClaimRequest{Owner: "w", Limit: 10, Now: time.Now()})
					if err != nil || len(claimed.Jobs) != 1 {
						t.Fatalf("claim before attempt %d: %+v, %v", i+1, claimed, err)
					}
				}
				res, err := st.Complete(ctx, a, autoDisableBy(autodisable.Policy{}))
				if err != nil || res.Number != i+1 || res.Owned == step.late {
					t.Fatalf("attempt %d: %+v, %v", i+1, res, err)
				}
				outcome := "failed"
				if step.ok {
					outcome = "succeeded"
				}
				want = append(want, catalog.DeliveryAttempt{ID: a.DeliveryID, Number: i + 1, StartedAt: a.StartedAt,
					Duration: time.Duration(10+i) * time.Millisecond, Outcome: outcome, StatusCode: ptr(a.StatusCode),
					Error: a.Error, Response: a.Response})
			}
			if n := countRows(t, st, `SELECT count(*) FROM delivery_attempts`); n != tc.wantRows {
				t.Errorf("%d attempt rows, want %d", n, tc.wantRows)
			}
			if j := readJob(t, st, job); j.State != tc.wantJob {
				t.Errorf("job is %s, want %s", j.State, tc.wantJob)
			}

			read := func(when string) (catalog.Delivery, []catalog.DeliveryAttempt, []catalog.EventDelivery) {
				t.Helper()
				d, attempts, err := st.GetDelivery(ctx, "acme", job)
				if err != nil {
					t.Fatal(err)
				}
				if !equalAttempts(attempts, want) {
					t.Errorf("%s: the delivery's attempts are\n%+v\nwant\n%+v", when, attempts, want)
				}
				deliveries, err := st.EventDeliveries(ctx, "acme", seq)
				if err != nil || len(deliveries) != 1 {
					t.Fatalf("%s: the event's deliveries: %+v, %v", when, deliveries, err)
				}
				if !equalAttempts(deliveries[0].Attempts, want) {
					t.Errorf("%s: the event's delivery attempts are\n%+v\nwant\n%+v", when, deliveries[0].Attempts, want)
				}
				for _, a := range want {
					if got, err := st.JobOfAttempt(ctx, "acme", a.ID); err != nil || got != job {
						t.Errorf("%s: the job of attempt %d = %v, %v; want %v", when, a.Number, got, err, job)
					}
					if _, err := st.JobOfAttempt(ctx, "globex", a.ID); err == nil {
						t.Errorf("%s: another tenant found attempt %d", when, a.Number)
					}
				}
				hours, _, err := st.AttemptLatency(ctx, "acme", sub, start.Add(-time.Minute), time.Now(), 100)
				if err != nil || len(hours) != 1 || hours[0].Attempts != int64(len(want)) {
					t.Errorf("%s: latency %+v, %v; want %d attempts in one hour", when, hours, err, len(want))
				}
				return d, attempts, deliveries
			}
			d, attempts, deliveries := read("folded")

			if _, err := st.Pool.Exec(ctx, unfoldSQL); err != nil {
				t.Fatal(err)
			}
			if n := countRows(t, st, `SELECT count(*) FROM delivery_attempts`); n != len(want) {
				t.Errorf("%d attempt rows after unfolding, want %d", n, len(want))
			}
			d2, attempts2, deliveries2 := read("unfolded")
			if !reflect.DeepEqual(d, d2) || !reflect.DeepEqual(attempts, attempts2) || !reflect.DeepEqual(deliveries, deliveries2) {
				t.Errorf("the readers differ between the folded attempt and its row:\n%+v %+v %+v\n%+v %+v %+v",
					d, attempts, deliveries, d2, attempts2, deliveries2)
			}
		})
	}
}

// unfoldSQL moves folded attempts back into rows, as migration 24's down
// does, leaving the folded columns empty.
const unfoldSQL = `
WITH rows AS (
    INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet)
    SELECT succeeded_attempt_id, id, succeeded_attempt, succeeded_started_at, succeeded_duration_ms, 'succeeded', last_status,
           succeeded_error, succeeded_response
    FROM delivery_jobs WHERE succeeded_attempt_id IS NOT NULL)
UPDATE delivery_jobs SET succeeded_attempt_id = NULL, succeeded_attempt = NULL, succeeded_started_at = NULL,
    succeeded_duration_ms = NULL, succeeded_error = NULL, succeeded_response = NULL
WHERE succeeded_attempt_id IS NOT NULL`

func equalAttempts(got, want []catalog.DeliveryAttempt) bool {
	return slices.EqualFunc(got, want, func(g, w catalog.DeliveryAttempt) bool {
		return g.ID == w.ID && g.Number == w.Number && g.StartedAt.Equal(w.StartedAt) && g.Duration == w.Duration &&
			g.Outcome == w.Outcome && (g.StatusCode == nil) == (w.StatusCode == nil) &&
			(g.StatusCode == nil || *g.StatusCode == *w.StatusCode) && g.Error == w.Error && string(g.Response) == string(w.Response)
	})
}

func countRows(t *testing.T, st *storetest.Store, query string) int {
	t.Helper()
	var n int
	if err := st.Pool.QueryRow(context.Background(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
