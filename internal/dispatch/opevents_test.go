package dispatch

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store/queue"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/config"
	opstore "github.com/hubctl/hubctl/internal/store/opevents"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// reportedData are the data of the tenant's operational events of key
// about sub, in seq order.
func (e *env) reportedData(sub uuid.UUID, key string) []map[string]any {
	e.t.Helper()
	rows, err := e.store.Pool.Query(context.Background(),
		`SELECT payload FROM events WHERE event_key = $1 AND subject = $2 ORDER BY seq`, key, sub.String())
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []map[string]any
	for rows.Next() {
		var payload []byte
		var d map[string]any
		if err := rows.Scan(&payload); err != nil {
			e.t.Fatal(err)
		}
		if err := json.Unmarshal(payload, &d); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func failFast(o *Options) {
	o.Breaker = config.BreakerConfig{Failures: 3, Cooldown: 10 * time.Millisecond}
}

// A destination that refuses 300 events, each dead at its one attempt,
// is reported failing once and dead-lettered once at the first dead
// letter; the rest gather into one report when the window ends.
func TestDeadLettersAreReportedOncePerWindow(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(*http.Request, int) int { return http.StatusBadGateway })
	sub, _ := e.webhookSub("acme", rc.URL, retrySchedule("0s"))
	e.insertJobs("acme", sub, 300)
	d, _ := e.start(failFast)
	waitFor(t, "300 dead letters", func() bool { return e.jobStates(sub)["dead/exhausted"] == 300 })

	if n := len(e.reportedData(sub, "hub.subscription_failing")); n != 1 {
		t.Errorf("%d subscription_failing events, want one for the span", n)
	}
	dead := e.reportedData(sub, "hub.deliveries_dead_lettered")
	if len(dead) != 1 || dead[0]["count"] != float64(1) || dead[0]["reason"] != "exhausted" {
		t.Fatalf("dead letter reports within the window: %v; want one, of the first", dead)
	}
	ended, err := d.ReportDeadLetters(context.Background(), time.Now().Add(2*DefaultDeadLetterWindow))
	if err != nil || ended != 1 {
		t.Fatalf("ReportDeadLetters ended %d windows, %v; want 1", ended, err)
	}
	dead = e.reportedData(sub, "hub.deliveries_dead_lettered")
	if len(dead) != 2 || dead[1]["count"] != float64(299) || len(dead[1]["event_ids"].([]any)) != 100 {
		t.Fatalf("reports after the window: %v; want the other 299 in one, naming 100 events", dead[1:])
	}
	if ended, err := d.ReportDeadLetters(context.Background(), time.Now().Add(4*DefaultDeadLetterWindow)); err != nil || ended != 0 {
		t.Errorf("a second flush ended %d windows, %v; want none", ended, err)
	}
}

// Auto-disable sheds a deep queue to dead letters in one transaction, and
// that is one report: a broken destination with thousands of queued
// events makes a handful of operational events.
func TestAutoDisableOfADeepQueueIsAHandfulOfEvents(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(*http.Request, int) int { return http.StatusBadGateway })
	sub, _ := e.webhookSub("acme", rc.URL)
	e.insertJobs("acme", sub, 10_000)
	e.start(failFast, func(o *Options) {
		o.AutoDisable = config.AutoDisableConfig{Enabled: true, FailureWindow: time.Millisecond}
	})
	waitFor(t, "the subscription auto-disabled", func() bool {
		return len(e.reportedData(sub, "hub.subscription_disabled")) == 1
	})
	if d := e.reportedData(sub, "hub.subscription_disabled")[0]; d["trigger"] != "automatic" || d["failing_since"] == nil {
		t.Errorf("disabled data %v", d)
	}
	var shed []map[string]any
	for _, r := range e.reportedData(sub, "hub.deliveries_dead_lettered") {
		if r["reason"] == hubapi.DeadSubscriptionDisabled {
			shed = append(shed, r)
		}
	}
	if len(shed) != 1 || shed[0]["count"].(float64) < 9_000 || len(shed[0]["event_ids"].([]any)) != 100 {
		t.Fatalf("reports of the shed queue: %v; want one counting it, naming 100 events", shed)
	}
	if n := e.count(`SELECT count(*) FROM events WHERE subject = $1`, sub.String()); n > 5 {
		t.Errorf("%d operational events about the subscription, want a handful", n)
	}
}

// A failure's report is written in its transaction: when the event cannot
// be written, the failure is not recorded either (the attempt, the span
// and its reported mark roll back), and recorded, it has exactly one
// event.
func TestAFailureAndItsReportCommitTogether(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sub, _ := e.webhookSub("acme", newReceiver(t, nil).URL)
	e.insertJobs("acme", sub, 1)
	res, err := e.store.Claim(ctx, claimAll("w"))
	if err != nil || len(res.Jobs) != 1 {
		t.Fatalf("claim = %d jobs, %v", len(res.Jobs), err)
	}
	job := res.Jobs[0]
	r := reporter{failingAfter: 1, window: time.Minute}
	attempt := queue.Attempt{JobID: job.ID, SubscriptionID: sub, Owner: "w", DeliveryID: uuid.Must(uuid.NewV7()), StartedAt: time.Now(),
		Duration: time.Millisecond, StatusCode: 503, Error: "unavailable", EventID: job.Event.ID, Retry: queue.Retry{At: time.Now().Add(time.Hour)}}
	never := func(span queue.FailureSpan, at time.Time) (queue.FailureSpan, bool) {
		if span.FailingSince.IsZero() {
			span.FailingSince = at
		}
		span.LastFailureAt = at
		return span, false
	}
	if _, err := e.store.Pool.Exec(ctx, `CREATE FUNCTION fail_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'failed on purpose'; END $$;
		CREATE TRIGGER fail_write AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION fail_write()`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CompleteReported(ctx, attempt, never, r.failure); err == nil {
		t.Fatal("the failure was recorded though its report could not be written")
	}
	if n := e.count(`SELECT count(*) FROM delivery_attempts`); n != 0 {
		t.Errorf("%d attempts recorded by a failure rolled back", n)
	}
	if n := e.count(`SELECT count(*) FROM subscriptions WHERE id = $1 AND (failing_since IS NOT NULL OR span_failures > 0 OR span_reported)`, sub); n != 0 {
		t.Error("the failure span moved in a failure rolled back")
	}
	if _, err := e.store.Pool.Exec(ctx, `DROP TRIGGER fail_write ON events`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CompleteReported(ctx, attempt, never, r.failure); err != nil {
		t.Fatal(err)
	}
	failing := e.reportedData(sub, "hub.subscription_failing")
	if len(failing) != 1 || failing[0]["last_status"] != float64(503) || failing[0]["last_error"] != "unavailable" {
		t.Fatalf("failing events %v, want one", failing)
	}
	if n := e.count(`SELECT count(*) FROM subscriptions WHERE id = $1 AND span_failures = 1 AND span_reported`, sub); n != 1 {
		t.Error("the recorded failure left no span marked reported")
	}

	// The success that closes the span reported failing reports the
	// recovery in the same transaction.
	if _, err := e.store.Pool.Exec(ctx, `CREATE TRIGGER fail_write AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION fail_write()`); err != nil {
		t.Fatal(err)
	}
	recoveredAt := time.Now().Add(time.Second)
	if _, err := opstore.CloseReportedSpan(ctx, e.store.Pool, sub, recoveredAt, r.recovered); err == nil {
		t.Fatal("the span closed though its recovery could not be written")
	}
	if n := e.count(`SELECT count(*) FROM subscriptions WHERE id = $1 AND failing_since IS NOT NULL AND span_reported`, sub); n != 1 {
		t.Error("the span closed in a transaction rolled back")
	}
	if _, err := e.store.Pool.Exec(ctx, `DROP TRIGGER fail_write ON events`); err != nil {
		t.Fatal(err)
	}
	if closed, err := opstore.CloseReportedSpan(ctx, e.store.Pool, sub, recoveredAt, r.recovered); err != nil || !closed {
		t.Fatalf("close the span: %v, %v", closed, err)
	}
	if closed, err := opstore.CloseReportedSpan(ctx, e.store.Pool, sub, recoveredAt, r.recovered); err != nil || closed {
		t.Fatalf("close the span again: %v, %v; want nothing to close", closed, err)
	}
	if n := len(e.reportedData(sub, "hub.subscription_recovered")); n != 1 {
		t.Errorf("%d recovered events, want one", n)
	}
	if n := e.count(`SELECT count(*) FROM subscriptions WHERE id = $1 AND failing_since IS NULL AND span_failures = 0 AND NOT span_reported`, sub); n != 1 {
		t.Error("the recovery left the span open")
	}
}

// Jobs lease recovery dead-letters as poison are reported with the
// recovery, as a failure's dead letters are.
func TestPoisonedJobsAreReported(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sub, _ := e.webhookSub("acme", newReceiver(t, nil).URL)
	e.insertJobs("acme", sub, 3)
	res, err := e.store.Claim(ctx, claimAll("dead-worker"))
	if err != nil || len(res.Jobs) != 3 {
		t.Fatalf("dead worker's claim = %d jobs, %v", len(res.Jobs), err)
	}
	if _, err := e.store.Pool.Exec(ctx, `UPDATE delivery_jobs SET lease_until = now() - interval '1 second', recoveries = 5`); err != nil {
		t.Fatal(err)
	}
	e.start()
	waitFor(t, "the poisoned jobs reported", func() bool { return len(e.reportedData(sub, "hub.deliveries_dead_lettered")) > 0 })
	dead := e.reportedData(sub, "hub.deliveries_dead_lettered")
	if len(dead) != 1 || dead[0]["reason"] != "poison" || dead[0]["count"] != float64(3) || len(dead[0]["event_ids"].([]any)) != 3 {
		t.Fatalf("reports %v; want one of the 3 poisoned jobs", dead)
	}
	if n := e.jobStates(sub)["dead/poison"]; n != 3 {
		t.Errorf("%d jobs dead as poison, want 3", n)
	}
}
