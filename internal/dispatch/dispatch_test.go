package dispatch

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
)

const testTopic = "lerian.streaming.midaz_transaction.posted"

// independentSignature is the webhook signature (docs/consuming.md), computed here from the
// standard library alone.
func independentSignature(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v1:" + timestamp + "."))
	m.Write(body)
	return "v1,sha256=" + hex.EncodeToString(m.Sum(nil))
}

func cloudEvent(tenant, id string, data []byte) *kgo.Record {
	h := func(k, v string) kgo.RecordHeader { return kgo.RecordHeader{Key: k, Value: []byte(v)} }
	return &kgo.Record{
		Headers: []kgo.RecordHeader{
			h("ce-specversion", "1.0"), h("ce-id", id), h("ce-source", "midaz"),
			h("ce-type", "studio.lerian.transaction.posted"), h("ce-time", "2026-11-29T12:00:00.5Z"),
			h("ce-schemaversion", "1.4.2"), h("ce-resourcetype", "transaction"), h("ce-eventtype", "posted"),
			h("ce-tenantid", tenant), h("ce-datacontenttype", "application/json; charset=utf-8"),
			h("ce-traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
			h("ce-tracestate", "vendor=opaque"),
		},
		Value: data,
	}
}

func TestEndToEndProduceToSignedWebhook(t *testing.T) {
	e := newEnv(t)
	kafka := kafkatest.New(t, testTopic)
	rc := newReceiver(t, nil)
	subID, secret := e.webhookSub("acme", rc.URL+"/hooks/orders?token=abc")

	startIngest(t, e.store, kafka.Brokers(), nil)
	e.start()

	ctx := context.Background()
	// Odd spacing and non-ASCII bytes: the body must arrive byte for byte.
	body := []byte("{ \"amount\" :10,\n  \"note\":\"h\xc3\xa9llo\"  }")
	eventID := uuid.Must(uuid.NewV7()).String()
	kafka.Produce(t, ctx, testTopic, cloudEvent("acme", eventID, body))
	waitFor(t, "the first delivery", func() bool { return len(rc.Requests()) == 1 })

	d := rc.Requests()[0]
	if string(d.Body) != string(body) {
		t.Errorf("body = %q, want %q", d.Body, body)
	}
	ts := d.Header.Get("X-Webhook-Timestamp")
	sent, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sent, 0)).Abs() > 10*time.Second {
		t.Errorf("X-Webhook-Timestamp = %q, want Unix seconds of now", ts)
	}
	if got := d.Header.Values("X-Webhook-Signature"); !slices.Equal(got, []string{independentSignature(secret, ts, body)}) {
		t.Errorf("X-Webhook-Signature = %q, does not verify with the subscription's secret", got)
	}
	deliveryID, err := uuid.Parse(d.Header.Get("X-Lerian-Delivery-Id"))
	if err != nil || deliveryID.Version() != 7 {
		t.Errorf("X-Lerian-Delivery-Id = %q, want a UUIDv7", d.Header.Get("X-Lerian-Delivery-Id"))
	}
	for name, want := range map[string]string{
		"Content-Type":            "application/json; charset=utf-8",
		"X-Lerian-Event-Id":       eventID,
		"X-Lerian-Event-Type":     "transaction.posted",
		"X-Lerian-Tenant-Id":      "acme",
		"X-Lerian-Schema-Version": "1.4.2",
		"Traceparent":             "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"Tracestate":              "vendor=opaque",
	} {
		if got := d.Header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if ua := d.Header.Get("User-Agent"); !strings.HasPrefix(ua, "hubctl/") {
		t.Errorf("User-Agent = %q, want hubctl/<version>", ua)
	}
	waitFor(t, "the attempt to be recorded", func() bool {
		return e.count(`SELECT count(*) FROM all_delivery_attempts WHERE id = $1 AND outcome = 'succeeded' AND status_code = 200`, deliveryID) == 1
	})

	// During a rotation overlap both secrets sign, the new one first.
	rotation, err := e.subs.RotateSecret(ctx, "acme", subID.String(), "")
	if err != nil {
		t.Fatalf("rotate: %v", err)
	}
	kafka.Produce(t, ctx, testTopic, cloudEvent("acme", uuid.Must(uuid.NewV7()).String(), []byte(`{"second":true}`)))
	waitFor(t, "the delivery after rotation", func() bool { return len(rc.Requests()) == 2 })
	d = rc.Requests()[1]
	ts = d.Header.Get("X-Webhook-Timestamp")
	want := []string{independentSignature(rotation.SigningSecret, ts, d.Body), independentSignature(secret, ts, d.Body)}
	if got := d.Header.Values("X-Webhook-Signature"); !slices.Equal(got, want) {
		t.Errorf("signatures during the overlap = %q, want new then old %q", got, want)
	}
}

// fixedJitter draws the top of every jitter range, so waits are the curve's
// steps themselves.
func fixedJitter() float64 { return 0.999999 }

// TestRetriesFollowTheCurveUntilSuccess: each failed attempt schedules the
// next one the curve's step after it ended, and no retry is made before
// its time. Both are read from what the dispatcher did, not from how long
// it took to do it: the job's next_attempt_at as each retry reaches the
// receiver, against the end of the attempt before it as recorded; how soon
// after its time a retry is claimed depends on the machine's load.
func TestRetriesFollowTheCurveUntilSuccess(t *testing.T) {
	e := newEnv(t)
	const failures = 3
	type retry struct {
		scheduled, arrived time.Time
	}
	var (
		mu      sync.Mutex
		retries []retry
	)
	rc := newReceiver(t, func(r *http.Request, n int) int {
		if n > 1 {
			arrived := time.Now()
			var scheduled time.Time
			if err := e.store.Pool.QueryRow(r.Context(), `SELECT j.next_attempt_at FROM delivery_jobs j JOIN events ev ON ev.seq = j.event_seq WHERE ev.id::text = $1`,
				r.Header.Get("X-Lerian-Event-Id")).Scan(&scheduled); err != nil {
				t.Errorf("read the retry's schedule: %v", err)
			}
			mu.Lock()
			retries = append(retries, retry{scheduled: scheduled, arrived: arrived})
			mu.Unlock()
		}
		if n <= failures {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	steps := []time.Duration{0, 60 * time.Millisecond, 120 * time.Millisecond, 180 * time.Millisecond, time.Hour}
	sub, _ := e.webhookSub("acme", rc.URL, retrySchedule("0s", "60ms", "120ms", "180ms", "1h"))
	e.insertJobs("acme", sub, 1)
	e.start(func(o *Options) { o.Rand = fixedJitter })

	waitFor(t, "success", func() bool { return e.jobStates(sub)["succeeded"] == 1 })
	got := rc.Requests()
	if len(got) != failures+1 {
		t.Fatalf("receiver got %d attempts, want %d", len(got), failures+1)
	}
	rows, err := e.store.Pool.Query(context.Background(), `SELECT a.started_at + a.duration_ms * interval '1 millisecond'
FROM all_delivery_attempts a JOIN delivery_jobs j ON j.id = a.job_id WHERE j.subscription_id = $1 ORDER BY a.attempt`, sub)
	if err != nil {
		t.Fatal(err)
	}
	ended, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ended) != failures+1 || len(retries) != failures {
		t.Fatalf("%d attempts recorded and %d retries seen, want %d and %d", len(ended), len(retries), failures+1, failures)
	}
	for i, r := range retries {
		// The recorded end is truncated to the millisecond; the jitter
		// drawn takes a few nanoseconds off the step.
		if wait := r.scheduled.Sub(ended[i]); wait < steps[i+1]-time.Millisecond || wait > steps[i+1]+time.Millisecond {
			t.Errorf("attempt %d scheduled %v after attempt %d ended, want %v", i+2, wait, i+1, steps[i+1])
		}
		if r.arrived.Before(r.scheduled) {
			t.Errorf("attempt %d arrived %v before its time", i+2, r.scheduled.Sub(r.arrived))
		}
	}
	deliveryIDs := map[string]bool{}
	for i, d := range got {
		deliveryIDs[d.Header.Get("X-Lerian-Delivery-Id")] = true
		if d.Header.Get("X-Lerian-Event-Id") != got[0].Header.Get("X-Lerian-Event-Id") {
			t.Errorf("attempt %d carries another event id", i+1)
		}
	}
	if len(deliveryIDs) != failures+1 {
		t.Errorf("%d distinct delivery ids over %d attempts", len(deliveryIDs), failures+1)
	}
	if n := e.count(`SELECT count(*) FROM all_delivery_attempts a JOIN delivery_jobs j ON j.id = a.job_id
		WHERE j.subscription_id = $1 AND a.id::text = ANY($2)`, sub, keys(deliveryIDs)); n != failures+1 {
		t.Errorf("%d attempts recorded under the receiver's delivery ids, want %d", n, failures+1)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestAlwaysFailingJobIsDeadAfterTheLastStep(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(*http.Request, int) int { return http.StatusBadGateway })
	sub, _ := e.webhookSub("acme", rc.URL, retrySchedule("0s", "10ms", "10ms"))
	e.insertJobs("acme", sub, 2)
	e.start()
	waitFor(t, "dead letters", func() bool { return e.jobStates(sub)["dead/exhausted"] == 2 })
	if n := len(rc.Requests()); n != 6 {
		t.Errorf("receiver got %d attempts, want 3 per job", n)
	}
	if n := e.count(`SELECT count(*) FROM delivery_jobs WHERE subscription_id = $1 AND attempts = 3 AND last_status = 502`, sub); n != 2 {
		t.Errorf("%d jobs record 3 attempts and the last status, want 2", n)
	}
}

func TestExpiredLeaseIsRecoveredAndRetried(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	sub, _ := e.webhookSub("acme", rc.URL)
	poisoned, _ := e.webhookSub("acme", rc.URL)
	e.insertJobs("acme", sub, 1)
	e.insertJobs("acme", poisoned, 1)
	// A worker of another process claims both and dies: its leases lapse.
	// The second job has already been recovered as many times as the
	// poison threshold allows.
	ctx := context.Background()
	res, err := e.store.Claim(ctx, claimAll("dead-worker"))
	if err != nil || len(res.Jobs) != 2 {
		t.Fatalf("dead worker's claim = %d jobs, %v", len(res.Jobs), err)
	}
	if _, err := e.store.Pool.Exec(ctx, `UPDATE delivery_jobs SET lease_until = now() - interval '1 second',
		recoveries = CASE WHEN subscription_id = $1 THEN 5 ELSE 0 END`, poisoned); err != nil {
		t.Fatal(err)
	}
	e.start()
	waitFor(t, "recovery", func() bool {
		return e.jobStates(sub)["succeeded"] == 1 && e.jobStates(poisoned)["dead/poison"] == 1
	})
	if n := e.count(`SELECT recoveries FROM delivery_jobs WHERE subscription_id = $1`, sub); n != 1 {
		t.Errorf("recoveries = %d, want 1", n)
	}
	if n := len(rc.Requests()); n != 1 {
		t.Errorf("receiver got %d deliveries, want only the recovered job's", n)
	}
}

func claimAll(owner string) queue.ClaimRequest {
	return queue.ClaimRequest{Owner: owner, Limit: 100, Now: time.Now(), LeaseMargin: time.Minute}
}

func TestTwoDispatchersNeverAttemptAJobTwiceAtOnce(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	inFlight := map[string]int{}
	delivered := map[string]int{}
	overlap := atomic.Int32{}
	rc := newReceiver(t, func(r *http.Request, _ int) int {
		id := r.Header.Get("X-Lerian-Event-Id")
		mu.Lock()
		inFlight[id]++
		if inFlight[id] > 1 {
			overlap.Add(1)
		}
		mu.Unlock()
		time.Sleep(time.Millisecond)
		mu.Lock()
		inFlight[id]--
		delivered[id]++
		mu.Unlock()
		return http.StatusOK
	})
	const perTenant = 150
	for _, tenant := range []string{"t1", "t2", "t3"} {
		sub, _ := e.webhookSub(tenant, rc.URL)
		e.insertJobs(tenant, sub, perTenant)
	}
	first, _ := e.start(func(o *Options) { o.Owner = "process-1" })
	second, _ := e.start(func(o *Options) { o.Owner = "process-2" })
	waitFor(t, "every job", func() bool {
		return e.count(`SELECT count(*) FROM delivery_jobs WHERE state = 'succeeded'`) == 3*perTenant
	})
	if overlap.Load() != 0 {
		t.Errorf("%d deliveries overlapped another of the same event", overlap.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(delivered) != 3*perTenant {
		t.Errorf("%d events delivered, want %d", len(delivered), 3*perTenant)
	}
	for id, n := range delivered {
		if n != 1 {
			t.Errorf("event %s delivered %d times", id, n)
		}
	}
	owners := e.count(`SELECT count(DISTINCT lease_owner) FROM delivery_jobs`) // cleared on success
	if owners != 0 {
		t.Errorf("%d lease owners left on succeeded jobs", owners)
	}
	if first.Owner() == second.Owner() {
		t.Error("both dispatchers claim under one owner")
	}
}

func TestQuietTenantIsServedBesideABacklog(t *testing.T) {
	e := newEnv(t)
	slow := newReceiver(t, func(*http.Request, int) int { time.Sleep(50 * time.Millisecond); return http.StatusOK })
	fast := newReceiver(t, nil)
	noisy, _ := e.webhookSub("a-noisy", slow.URL)
	quiet, _ := e.webhookSub("b-quiet", fast.URL)
	e.insertJobs("a-noisy", noisy, 50_000)
	e.start()
	waitFor(t, "the backlog to be worked on", func() bool { return len(slow.Requests()) >= 16 })

	queued := time.Now()
	e.insertJobs("b-quiet", quiet, 1)
	waitFor(t, "the quiet tenant's delivery", func() bool { return len(fast.Requests()) == 1 })
	if took := fast.Requests()[0].At.Sub(queued); took > 2*time.Second {
		t.Errorf("the quiet tenant's event took %v beside a 50,000-job backlog, want under 2s", took)
	} else {
		t.Logf("quiet tenant delivered after %v beside a 50,000-job backlog", took)
	}
}

func TestBreakerShedsADeadDestinationAndResumes(t *testing.T) {
	e := newEnv(t)
	var healthy atomic.Bool
	rc := newReceiver(t, func(*http.Request, int) int {
		if healthy.Load() {
			return http.StatusOK
		}
		return http.StatusInternalServerError
	})
	zeros := slices.Repeat([]string{"0s"}, 12)
	sub, _ := e.webhookSub("acme", rc.URL, retrySchedule(zeros...))
	e.insertJobs("acme", sub, 20)
	const failures, cooldown = 3, 400 * time.Millisecond
	reg := prometheus.NewRegistry()
	d, _ := e.start(func(o *Options) {
		// One attempt at a time, so none is already in flight when the
		// breaker opens and the bound is exact.
		o.Dispatch.Workers = 1
		o.Dispatch.DestinationMaxInFlight = 1
		o.Breaker = config.BreakerConfig{Failures: failures, Cooldown: cooldown}
		o.Registerer = reg
	})
	waitFor(t, "the breaker to open", func() bool { return d.breakers.OpenCount() == 1 })
	opened := time.Now()
	// Each probe comes a cooldown after the last failure: two of them, with
	// jobs shed meanwhile, show the breaker held through two cooldowns.
	// The receiver sees an attempt a moment before its job records it, so
	// the jobs are counted first: an attempt arriving between the two
	// counts makes the condition false instead of the comparison below.
	var attempts, spent int
	waitFor(t, "two probes of the dead destination recorded and jobs shed", func() bool {
		shed, _ := gauge(t, reg, "streaming_hub_jobs_shed_total", nil)
		spent = e.count(`SELECT coalesce(sum(attempts), 0)::int FROM delivery_jobs WHERE subscription_id = $1`, sub)
		attempts = len(rc.Requests())
		return attempts >= failures+2 && spent >= attempts && shed > 0
	})
	probes := int(time.Since(opened)/cooldown) + 1
	if attempts > failures+probes {
		t.Errorf("dead destination got %d attempts over %v, want at most %d failures + %d probes", attempts, time.Since(opened), failures, probes)
	}
	if spent != attempts {
		t.Errorf("jobs spent %d attempts, receiver saw %d: shedding must not spend attempts", spent, attempts)
	}

	healthy.Store(true)
	waitFor(t, "every job after recovery", func() bool { return e.jobStates(sub)["succeeded"] == 20 })
	if d.breakers.OpenCount() != 0 {
		t.Error("breaker still open after the destination recovered")
	}
}

func TestAutoDisable(t *testing.T) {
	cases := []struct {
		name         string
		killSwitchOn bool
		wantDisabled bool
	}{
		{name: "trips when sustained and spread", killSwitchOn: true, wantDisabled: true},
		{name: "kill switch off", killSwitchOn: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rc := newReceiver(t, func(*http.Request, int) int { return http.StatusServiceUnavailable })
			sub, _ := e.webhookSub("acme", rc.URL, retrySchedule(slices.Repeat([]string{"25ms"}, 12)...))
			e.insertJobs("acme", sub, 1)
			e.start(func(o *Options) {
				o.Dispatch.Workers = 1
				o.AutoDisable = config.AutoDisableConfig{Enabled: tc.killSwitchOn, FailureWindow: 150 * time.Millisecond, FailureSpread: 100 * time.Millisecond}
			})
			// Queued behind the failing one, not yet due: shed with it.
			e.insertJobsDue("acme", sub, 2, time.Hour)
			if !tc.wantDisabled {
				time.Sleep(500 * time.Millisecond)
				if n := e.count(`SELECT count(*) FROM subscriptions WHERE id = $1 AND enabled`, sub); n != 1 {
					t.Error("subscription disabled although the kill switch is off")
				}
				return
			}
			waitFor(t, "auto-disable", func() bool {
				return e.count(`SELECT count(*) FROM subscriptions WHERE id = $1 AND NOT enabled AND disabled_reason = 'auto_disabled'
					AND last_failure_at - failing_since >= interval '100 milliseconds' AND verification_state = 'active'`, sub) == 1
			})
			if states := e.jobStates(sub); states["dead/subscription_disabled"] != 3 {
				t.Errorf("jobs after auto-disable = %v, want all dead subscription_disabled", states)
			}
		})
	}
}

func TestPrivateDestinationIsRefusedAtDialTime(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	sub, _ := e.webhookSub("acme", rc.URL, retrySchedule("0s"))
	e.insertJobs("acme", sub, 1)
	e.startWith(e.subscriptions(false))
	waitFor(t, "the attempt", func() bool { return e.jobStates(sub)["dead/exhausted"] == 1 })
	if n := len(rc.Requests()); n != 0 {
		t.Errorf("receiver on loopback got %d deliveries", n)
	}
	if n := e.count(`SELECT count(*) FROM delivery_attempts a JOIN delivery_jobs j ON j.id = a.job_id
		WHERE j.subscription_id = $1 AND a.outcome = 'failed' AND a.error LIKE 'destination refused%'`, sub); n != 1 {
		t.Errorf("%d refused attempts recorded, want 1", n)
	}
}

func TestMalformedStoredOverrideFallsBackToTheDefaultCurve(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(*http.Request, int) int { return http.StatusInternalServerError })
	sub, _ := e.webhookSub("acme", rc.URL)
	if _, err := e.store.Pool.Exec(context.Background(), `UPDATE subscriptions SET retry_schedule = '{"soon"}' WHERE id = $1`, sub); err != nil {
		t.Fatal(err)
	}
	e.insertJobs("acme", sub, 1)
	e.start()
	waitFor(t, "the retry", func() bool { return e.jobStates(sub)["pending"] == 1 && len(rc.Requests()) == 1 })
	// The default curve's second step is up to 5s away, not dead.
	if n := e.count(`SELECT count(*) FROM delivery_jobs WHERE subscription_id = $1 AND attempts = 1
		AND next_attempt_at <= now() + interval '5 seconds'`, sub); n != 1 {
		t.Error("job not rescheduled on the default curve")
	}
}

// Fairness (docs/concepts.md, Dispatch): a quiet tenant's new event is attempted within about a second
// although a noisy tenant's slow destination has every worker busy and a
// backlog queued. Claims shrink to the pace of the slow destination, so
// the quiet job is claimed as soon as a worker frees, and the local queue
// serves tenants in turn, so it does not wait behind the noisy jobs
// claimed before it.
func TestQuietTenantIsServedBesideASlowDestination(t *testing.T) {
	e := newEnv(t)
	slow := newReceiver(t, func(*http.Request, int) int { time.Sleep(400 * time.Millisecond); return http.StatusOK })
	fast := newReceiver(t, nil)
	noisy, _ := e.webhookSub("a-noisy", slow.URL)
	quiet, _ := e.webhookSub("b-quiet", fast.URL)
	e.insertJobs("a-noisy", noisy, 2_000)
	e.start()
	waitFor(t, "the backlog to be worked on", func() bool { return len(slow.Requests()) >= 24 })

	queued := time.Now()
	e.insertJobs("b-quiet", quiet, 1)
	waitFor(t, "the quiet tenant's delivery", func() bool { return len(fast.Requests()) == 1 })
	if took := fast.Requests()[0].At.Sub(queued); took > time.Second {
		t.Errorf("the quiet tenant's event took %v beside a destination taking 400ms per attempt, want about a second at most", took)
	} else {
		t.Logf("quiet tenant delivered after %v beside a destination taking 400ms per attempt", took)
	}
}

func TestShutdownReleasesQueuedJobsAndRecordsEverySuccess(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(*http.Request, int) int { time.Sleep(50 * time.Millisecond); return http.StatusOK })
	sub, _ := e.webhookSub("acme", rc.URL)
	e.insertJobs("acme", sub, 40)
	// One worker and a batch of 16: most claimed jobs are still queued
	// when the dispatcher stops.
	_, stop := e.start(func(o *Options) { o.Dispatch.Workers = 1 })
	waitFor(t, "the first deliveries", func() bool { return len(rc.Requests()) >= 2 })
	stop()

	states := e.jobStates(sub)
	delivered := len(rc.Requests())
	if states["in_flight"] != 0 || states["succeeded"] != delivered || states["pending"] != 40-delivered {
		t.Errorf("jobs after shutdown = %v with %d delivered, want every delivery recorded and the rest pending", states, delivered)
	}
	if n := e.count(`SELECT count(*) FROM delivery_jobs WHERE subscription_id = $1 AND state = 'pending' AND (attempts > 0 OR recoveries > 0)`, sub); n != 0 {
		t.Errorf("%d released jobs spent an attempt or a recovery", n)
	}
}
