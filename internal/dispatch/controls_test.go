package dispatch

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// insertOrderedJobs stores perSubject events for each subject, interleaved
// in seq order, each with a job keyed by its subject as ingest keys jobs
// of a subscription ordered by subject. It returns each event id's subject
// and its place among that subject's events.
func (e *env) insertOrderedJobs(tenant string, sub uuid.UUID, subjects []string, perSubject int) map[string]orderedEvent {
	e.t.Helper()
	rows, err := e.store.Pool.Query(context.Background(), `
WITH ev AS (
    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time, subject,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
    SELECT $1, gen_random_uuid(), 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.transaction.posted',
           now(), s.subject, '{}', '{}', convert_to('{"n":' || g || '}', 'UTF8'), 'topic', 0, g
    FROM generate_series(1, $4) g CROSS JOIN unnest($3::text[]) WITH ORDINALITY s (subject, k)
    ORDER BY g, s.k
    RETURNING seq, id, subject),
 jobs AS (
    INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, ordering_key)
    SELECT gen_random_uuid(), $1, $2, seq, subject FROM ev ORDER BY seq)
SELECT id::text, subject, row_number() OVER (PARTITION BY subject ORDER BY seq)::int FROM ev`, tenant, sub, subjects, perSubject)
	if err != nil {
		e.t.Fatalf("insert ordered jobs: %v", err)
	}
	out := map[string]orderedEvent{}
	var id, subject string
	var place int
	if _, err := pgx.ForEachRow(rows, []any{&id, &subject, &place}, func() error {
		out[id] = orderedEvent{subject, place}
		return nil
	}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.store.Pool.Exec(context.Background(), `SELECT pg_notify($1, '')`, "hubctl_jobs"); err != nil {
		e.t.Fatal(err)
	}
	return out
}

type orderedEvent struct {
	subject string
	place   int // 1 for the subject's first event
}

// TestOrderedDeliveryUnderRandomFailuresTwoDispatchersAndACrash delivers
// five subjects of an ordered subscription through two dispatchers to a
// receiver that fails a quarter of the requests, while a third process
// claims the heads of every subject and dies (its leases expire and are
// recovered). Each subject's first successful deliveries arrive in seq
// order; one subject held by a retry does not hold the others.
func TestOrderedDeliveryUnderRandomFailuresTwoDispatchersAndACrash(t *testing.T) {
	e := newEnv(t)
	var (
		mu      sync.Mutex
		rnd     = rand.New(rand.NewPCG(1, 2))
		events  map[string]orderedEvent
		firsts  = map[string][]int{}
		got     = map[string]bool{}
		stalled = "s5" // refused for its first second: the others must go on
		start   time.Time
	)
	rc := newReceiver(t, func(r *http.Request, _ int) int {
		mu.Lock()
		defer mu.Unlock()
		ev, ok := events[r.Header.Get("X-Lerian-Event-Id")]
		if !ok {
			return http.StatusOK
		}
		if ev.subject == stalled && time.Since(start) < time.Second || rnd.IntN(4) == 0 {
			return http.StatusServiceUnavailable
		}
		if !got[r.Header.Get("X-Lerian-Event-Id")] {
			got[r.Header.Get("X-Lerian-Event-Id")] = true
			firsts[ev.subject] = append(firsts[ev.subject], ev.place)
		}
		return http.StatusOK
	})
	steps := make([]string, 12)
	for i := range steps {
		steps[i] = "200ms"
	}
	sub, _ := e.webhookSub("acme", rc.URL, retrySchedule(steps...),
		func(in *hubapi.SubscriptionCreate) { in.Ordering = "subject" })
	subjects := []string{"s1", "s2", "s3", "s4", "s5"}
	const perSubject = 20

	mu.Lock()
	events = e.insertOrderedJobs("acme", sub, subjects, perSubject)
	start = time.Now()
	mu.Unlock()

	// A process claims the head of every subject and dies.
	ctx := context.Background()
	res, err := e.store.Claim(ctx, claimAll("dead-worker"))
	if err != nil || len(res.Jobs) != len(subjects) {
		t.Fatalf("dead worker's claim = %d jobs, %v; want one per subject", len(res.Jobs), err)
	}
	e.start(func(o *Options) { o.Owner = "process-1" })
	e.start(func(o *Options) { o.Owner = "process-2" })
	// The dispatchers claim with the same statement: it finds nothing while
	// the heads are leased.
	if res, err := e.store.Claim(ctx, claimAll("probe")); err != nil || len(res.Jobs) != 0 {
		t.Fatalf("a claim while the heads are leased to a dead process = %d jobs, %v; want none", len(res.Jobs), err)
	}
	if n := e.count(`SELECT count(*) FROM delivery_jobs WHERE state = 'succeeded'`); n != 0 {
		t.Fatalf("%d jobs succeeded while the heads of their keys were leased to a dead process", n)
	}
	if _, err := e.store.Pool.Exec(ctx, `UPDATE delivery_jobs SET lease_until = now() - interval '1 second' WHERE lease_owner = 'dead-worker'`); err != nil {
		t.Fatal(err)
	}

	// While s5 is refused, the other subjects are delivered to the end.
	waitFor(t, "the subjects other than the stalled one", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range subjects[:4] {
			if len(firsts[s]) != perSubject {
				return false
			}
		}
		return true
	})
	mu.Lock()
	if n := len(firsts[stalled]); time.Since(start) < time.Second && n != 0 {
		t.Errorf("stalled subject delivered %d events while it was refused", n)
	}
	mu.Unlock()
	waitFor(t, "every job", func() bool {
		return e.count(`SELECT count(*) FROM delivery_jobs WHERE state IN ('succeeded', 'dead')`) == len(subjects)*perSubject
	})
	if states := e.jobStates(sub); states["succeeded"] != len(subjects)*perSubject {
		t.Fatalf("jobs = %v, want every one succeeded", states)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range subjects {
		if f := firsts[s]; len(f) != perSubject || !slices.IsSorted(f) {
			t.Errorf("subject %s: first successful deliveries in the order %v, want 1..%d", s, f, perSubject)
		}
	}
	if n := e.count(`SELECT count(*) FROM delivery_jobs WHERE recoveries > 0`); n != len(subjects) {
		t.Errorf("%d jobs recovered, want the dead process's %d", n, len(subjects))
	}
}

func testRateLimit(t *testing.T, dispatchers int) {
	e := newEnv(t)
	limited := newReceiver(t, nil)
	free := newReceiver(t, nil)
	const limit = 20.0
	step := time.Duration(float64(time.Second) / limit)
	sub, _ := e.webhookSub("acme", limited.URL, func(in *hubapi.SubscriptionCreate) {
		perSecond := limit
		in.RateLimit = &perSecond
	})
	other, _ := e.webhookSub("acme", free.URL)
	// Twenty seconds of slots: some are still held when the checks run,
	// however long the other subscription's jobs take on a busy machine.
	const limitedJobs = 400
	e.insertJobs("acme", sub, limitedJobs)
	e.insertJobs("acme", other, 200)
	for i := range dispatchers {
		e.start(func(o *Options) { o.Owner = "process-" + string(rune('1'+i)) })
	}

	// The other subscription of the same tenant is not held back behind
	// the limited one's slots.
	waitFor(t, "the unlimited subscription's jobs", func() bool { return len(free.Requests()) == 200 })
	if n := len(limited.Requests()); n >= limitedJobs {
		t.Errorf("the limited subscription had all of its %d deliveries by the time the other had its 200", n)
	}
	const checked = 60
	waitFor(t, "deliveries of the limited subscription", func() bool { return len(limited.Requests()) >= checked })

	// The limit is judged by the slots, not by when deliveries arrive: on
	// a busy machine slots that came due while the other subscription's
	// earlier-due jobs were claimed wait behind them (a tenant's jobs are
	// claimed in due order) and then go together, which says nothing of
	// the limiter. Slots are taken one step apart, by one process or two,
	// and no delivery comes before its slot. The first job's slot was
	// "now" at its claim, which left it due as inserted: it is left out.
	slots := map[string]time.Time{}
	var spaced []time.Time
	rows, err := e.store.Pool.Query(context.Background(), `
SELECT e.id::text, j.next_attempt_at FROM delivery_jobs j JOIN events e ON e.seq = j.event_seq
WHERE j.subscription_id = $1 AND j.state <> 'pending' OR j.subscription_id = $1 AND j.shed_reason = 'rate_limited'
ORDER BY j.next_attempt_at`, sub)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			t.Fatal(err)
		}
		slots[id] = at
		spaced = append(spaced, at)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(spaced) < checked {
		t.Fatalf("%d jobs of the limited subscription have slots, want at least %d", len(spaced), checked)
	}
	spaced = spaced[1:]
	for i := 1; i < len(spaced); i++ {
		// Microsecond steps: the database keeps microseconds.
		if gap := spaced[i].Sub(spaced[i-1]); gap < step-time.Microsecond {
			t.Fatalf("slots %d and %d are %v apart, want at least %v", i-1, i, gap, step)
		}
	}
	span := spaced[len(spaced)-1].Sub(spaced[0])
	rate := float64(len(spaced)-1) / span.Seconds()
	if rate < limit*0.9 {
		t.Errorf("%d dispatcher(s): slots at %.1f/s, want %v within 10%%: jobs held longer than the limit needs", dispatchers, rate, limit)
	}
	t.Logf("%d dispatcher(s): %d slots at %.2f/s against a limit of %v", dispatchers, len(spaced), rate, limit)
	for _, d := range limited.Requests() {
		slot, ok := slots[d.Header.Get("X-Lerian-Event-Id")]
		if !ok {
			t.Fatalf("delivery of event %s, which no claimed job of the limited subscription has", d.Header.Get("X-Lerian-Event-Id"))
		}
		if d.At.Before(slot) {
			t.Errorf("event %s delivered at %v, before its slot %v", d.Header.Get("X-Lerian-Event-Id"), d.At, slot)
		}
	}

	// Held jobs spent nothing: no attempt failed, and every job still
	// waiting has all its attempts left.
	if n := e.count(`SELECT count(*) FROM delivery_attempts WHERE outcome = 'failed'`); n != 0 {
		t.Errorf("%d failed attempts recorded", n)
	}
	if n := e.count(`SELECT count(*) FROM delivery_jobs WHERE state = 'pending' AND attempts > 0`); n != 0 {
		t.Errorf("%d waiting jobs have spent attempts", n)
	}
	if n := e.count(`SELECT count(*) FROM delivery_jobs WHERE state = 'pending' AND shed_reason = 'rate_limited'`); n == 0 {
		t.Error("no waiting job is held for its slot")
	}
	view, err := e.subs.Get(context.Background(), "acme", sub.String())
	if err != nil || view.Rate == nil || !view.Rate.Throttled || view.Rate.Current < limit*0.5 || view.Rate.Current > limit*1.1 {
		t.Errorf("subs get rate = %+v, %v; want throttled near %v/s", view.Rate, err, limit)
	}
}

func TestRateLimitWithOneDispatcher(t *testing.T)  { testRateLimit(t, 1) }
func TestRateLimitWithTwoDispatchers(t *testing.T) { testRateLimit(t, 2) }

// TestTheSweepReleasesAKeyLeftWithOnlyParkedJobs strands a subject the way
// a missed release would leave it, every job parked and nothing ahead of
// them: the maintenance loop's sweep releases its head, counts it, and the
// subject is delivered to the end in order.
func TestTheSweepReleasesAKeyLeftWithOnlyParkedJobs(t *testing.T) {
	e := newEnv(t)
	var (
		mu     sync.Mutex
		events map[string]orderedEvent
		firsts = map[string][]int{}
	)
	rc := newReceiver(t, func(r *http.Request, _ int) int {
		mu.Lock()
		defer mu.Unlock()
		if ev, ok := events[r.Header.Get("X-Lerian-Event-Id")]; ok {
			firsts[ev.subject] = append(firsts[ev.subject], ev.place)
		}
		return http.StatusOK
	})
	sub, _ := e.webhookSub("acme", rc.URL, func(in *hubapi.SubscriptionCreate) { in.Ordering = "subject" })
	mu.Lock()
	events = e.insertOrderedJobs("acme", sub, []string{"stranded", "free"}, 5)
	mu.Unlock()
	if _, err := e.store.Pool.Exec(context.Background(),
		`UPDATE delivery_jobs SET next_attempt_at = 'infinity' WHERE ordering_key = 'stranded'`); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	e.start(func(o *Options) { o.Registerer = reg })
	waitFor(t, "both subjects delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(firsts["stranded"]) == 5 && len(firsts["free"]) == 5
	})
	mu.Lock()
	defer mu.Unlock()
	for s, f := range firsts {
		if !slices.Equal(f, []int{1, 2, 3, 4, 5}) {
			t.Errorf("subject %s delivered in the order %v", s, f)
		}
	}
	if n, _ := gauge(t, reg, "streaming_hub_ordering_keys_swept_total", nil); n != 1 {
		t.Errorf("swept keys = %v, want the stranded one", n)
	}
}
