package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/schedule"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/queue"
)

func TestNextRetry(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	curve, err := schedule.Parse([]string{"0s", "10s", "1m"})
	if err != nil {
		t.Fatal(err)
	}
	half := func() float64 { return 0.5 }
	cases := []struct {
		name         string
		attemptsMade int
		retryAfter   time.Duration
		want         queue.Retry
	}{
		{name: "first failure waits half the second step", attemptsMade: 1, want: queue.Retry{At: now.Add(5 * time.Second)}},
		{name: "second failure waits half the third step", attemptsMade: 2, want: queue.Retry{At: now.Add(30 * time.Second)}},
		{name: "Retry-After lengthens the wait", attemptsMade: 1, retryAfter: time.Minute, want: queue.Retry{At: now.Add(time.Minute)}},
		{name: "Retry-After never shortens it", attemptsMade: 2, retryAfter: time.Second, want: queue.Retry{At: now.Add(30 * time.Second)}},
		{name: "Retry-After is capped at 10h", attemptsMade: 1, retryAfter: 48 * time.Hour, want: queue.Retry{At: now.Add(10 * time.Hour)}},
		{name: "no step left is exhausted", attemptsMade: 3, want: queue.Retry{Exhausted: true}},
		{name: "exhausted whatever Retry-After says", attemptsMade: 3, retryAfter: time.Minute, want: queue.Retry{Exhausted: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextRetry(curve, tc.attemptsMade, tc.retryAfter, now, half); got != tc.want {
				t.Errorf("nextRetry = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// fakeSink records whether it was closed.
type fakeSink struct{ closed atomic.Bool }

func (s *fakeSink) Deliver(context.Context, sink.Delivery) sink.Outcome {
	return sink.Outcome{OK: true}
}
func (s *fakeSink) Probe(context.Context, sink.ProbeRequest) error { return nil }
func (s *fakeSink) Close() error                                   { s.closed.Store(true); return nil }

// countingHandler counts log records at warning level and above.
type countingHandler struct{ warnings atomic.Int32 }

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.warnings.Add(1)
	}
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

func TestSinkCacheOpensOncePerVersionAndClosesReplacedSinksWhenIdle(t *testing.T) {
	var opened []*fakeSink
	cache := newSinkCache(func(catalog.Subscription) (sink.Sink, error) {
		s := &fakeSink{}
		opened = append(opened, s)
		return s, nil
	}, slog.New(slog.DiscardHandler))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sub := catalog.Subscription{ID: uuid.New(), UpdatedAt: now}

	first, _ := cache.acquire(sub, now)
	again, _ := cache.acquire(sub, now)
	if len(opened) != 1 || first != again {
		t.Fatalf("opened %d sinks for one version, want 1", len(opened))
	}
	cache.release(again, sub.ID)

	// An older row, read by an earlier claim, keeps the newest sink.
	older := sub
	older.UpdatedAt = now.Add(-time.Minute)
	if e, _ := cache.acquire(older, now); e != first {
		t.Error("an older row reopened the sink")
	} else {
		cache.release(e, sub.ID)
	}

	changed := sub
	changed.UpdatedAt = now.Add(time.Second)
	second, _ := cache.acquire(changed, now)
	if len(opened) != 2 || second == first {
		t.Fatal("a changed subscription did not get a new sink")
	}
	if opened[0].closed.Load() {
		t.Error("the replaced sink was closed while an attempt still used it")
	}
	cache.release(first, sub.ID)
	if !opened[0].closed.Load() {
		t.Error("the replaced sink was not closed once its last attempt ended")
	}
	cache.release(second, sub.ID)

	cache.evictIdle(now.Add(sinkIdleTimeout-time.Second), sinkIdleTimeout)
	if opened[1].closed.Load() {
		t.Error("a recently used sink was evicted")
	}
	cache.evictIdle(now.Add(sinkIdleTimeout), sinkIdleTimeout)
	if !opened[1].closed.Load() {
		t.Error("an idle sink was not evicted")
	}
}

func TestSinkCacheReopensWhenTheRotationOverlapEnds(t *testing.T) {
	opens := 0
	cache := newSinkCache(func(catalog.Subscription) (sink.Sink, error) { opens++; return &fakeSink{}, nil }, slog.New(slog.DiscardHandler))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	expires := now.Add(time.Hour)
	sub := catalog.Subscription{ID: uuid.New(), UpdatedAt: now, PreviousSecretExpiresAt: &expires}
	for _, at := range []time.Time{now, expires.Add(-time.Second), expires, expires.Add(time.Hour)} {
		e, err := cache.acquire(sub, at)
		if err != nil {
			t.Fatal(err)
		}
		cache.release(e, sub.ID)
	}
	if opens != 2 {
		t.Errorf("opened %d times, want 2: once with both secrets, once after the overlap", opens)
	}
}

func TestSubscriptionCacheLogsAMalformedOverrideOncePerVersion(t *testing.T) {
	h := &countingHandler{}
	now := time.Now()
	sub := catalog.Subscription{ID: uuid.New(), UpdatedAt: now, RetrySchedule: []string{"soon"}}
	cache := newSubscriptionCache(func(context.Context, []uuid.UUID) ([]catalog.Subscription, error) {
		return []catalog.Subscription{sub}, nil
	}, slog.New(h))
	job := func() []queue.ClaimedJob {
		return []queue.ClaimedJob{{ID: uuid.New(), SubscriptionID: sub.ID, SubscriptionUpdatedAt: sub.UpdatedAt}}
	}
	for range 3 {
		got, err := cache.resolve(context.Background(), job(), now)
		if err != nil {
			t.Fatal(err)
		}
		if c := got[0].curve; c.Attempts() != schedule.Default.Attempts() {
			t.Fatalf("curve has %d attempts, want the default's", c.Attempts())
		}
	}
	sub.UpdatedAt = now.Add(time.Second)
	if _, err := cache.resolve(context.Background(), job(), now); err != nil {
		t.Fatal(err)
	}
	if n := h.warnings.Load(); n != 2 {
		t.Errorf("%d warnings, want one per version", n)
	}
	sinks := newSinkCache(func(catalog.Subscription) (sink.Sink, error) { return nil, errors.New("no sink") }, slog.New(slog.DiscardHandler))
	if _, err := sinks.acquire(sub, now); err == nil {
		t.Error("acquire hid the sink's open error")
	}
}

func TestNewRequiresStoreAndSubscriptions(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("New without a store succeeded")
	}
}

func TestLeaseCoversAttempt(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const timeout, margin = 10 * time.Second, 15 * time.Second
	cases := []struct {
		name  string
		lease time.Time
		want  bool
	}{
		{name: "fresh lease with its queue allowance", lease: now.Add(timeout + margin + queueAllowance), want: true},
		{name: "exactly an attempt and its recording left", lease: now.Add(timeout + margin), want: true},
		{name: "a moment short", lease: now.Add(timeout + margin - time.Millisecond)},
		{name: "already expired", lease: now.Add(-time.Second)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := leaseCoversAttempt(tc.lease, now, timeout, margin); got != tc.want {
				t.Errorf("leaseCoversAttempt = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGatherTakesWhatIsWaitingUpToABatch(t *testing.T) {
	cases := []struct {
		name    string
		waiting int
		closed  bool
		want    int
	}{
		{name: "nothing waiting", waiting: 0, want: 1},
		{name: "some waiting", waiting: 5, want: 6},
		{name: "more than a batch waiting", waiting: maxRecordBatch + 10, want: maxRecordBatch},
		{name: "closed after some", waiting: 3, closed: true, want: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ch := make(chan success, tc.waiting)
			for range tc.waiting {
				ch <- success{}
			}
			if tc.closed {
				close(ch)
			}
			if got := gather([]success{{}}, ch); len(got) != tc.want {
				t.Errorf("gathered %d, want %d", len(got), tc.want)
			}
		})
	}
}

func TestClaimRoom(t *testing.T) {
	const workers, batch = 8, 16
	cases := []struct {
		name             string
		queued, reserved int
		want             bool
	}{
		{name: "empty queue, nothing in flight", want: true},
		{name: "a worker and a batch queued: the next batch is claimed ahead", queued: workers + batch, want: true},
		{name: "more than that queued", queued: workers + batch + 1, want: false},
		{name: "one claim in flight, queue down to a job per worker", queued: workers, reserved: batch, want: true},
		{name: "one claim in flight, more queued", queued: workers + 1, reserved: batch, want: false},
		{name: "both claims in flight", queued: 0, reserved: claimers * batch, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := claimRoom(tc.queued, tc.reserved, workers, batch); got != tc.want {
				t.Errorf("claimRoom(%d, %d) = %v, want %v", tc.queued, tc.reserved, got, tc.want)
			}
			// Whenever a claim may start, its whole batch fits the queue.
			if claimRoom(tc.queued, tc.reserved, workers, batch) && tc.queued+tc.reserved+batch > workers+claimers*batch {
				t.Errorf("a claim may start without room for its batch")
			}
		})
	}
}

func TestSubscriptionCacheReadsOnlyMissingOrOlderVersions(t *testing.T) {
	v1 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	v2 := v1.Add(time.Minute)
	a, b := uuid.New(), uuid.New()
	rows := map[uuid.UUID]catalog.Subscription{
		a: {ID: a, TenantID: "acme", UpdatedAt: v1},
		b: {ID: b, TenantID: "globex", UpdatedAt: v1},
	}
	var reads [][]uuid.UUID
	c := newSubscriptionCache(func(_ context.Context, ids []uuid.UUID) ([]catalog.Subscription, error) {
		reads = append(reads, ids)
		var out []catalog.Subscription
		for _, id := range ids {
			if row, ok := rows[id]; ok {
				out = append(out, row)
			}
		}
		return out, nil
	}, slog.New(slog.DiscardHandler))
	job := func(sub uuid.UUID, version time.Time) queue.ClaimedJob {
		return queue.ClaimedJob{ID: uuid.New(), SubscriptionID: sub, SubscriptionUpdatedAt: version}
	}
	ctx, now := context.Background(), v1

	// First claim: both read, in one query, each once.
	got, err := c.resolve(ctx, []queue.ClaimedJob{job(a, v1), job(b, v1), job(a, v1)}, now)
	if err != nil || len(reads) != 1 || len(reads[0]) != 2 {
		t.Fatalf("resolve = %v; reads %v, want one read of both", err, reads)
	}
	if got[0].sub.TenantID != "acme" || got[1].sub.TenantID != "globex" || got[2].sub != got[0].sub {
		t.Errorf("jobs paired with the wrong subscriptions")
	}

	// Same versions again: nothing read.
	if _, err := c.resolve(ctx, []queue.ClaimedJob{job(a, v1), job(b, v1)}, now); err != nil || len(reads) != 1 {
		t.Fatalf("resolve of cached versions read again: %v, %v", reads, err)
	}

	// The claim saw a newer version of b: only b is read.
	rows[b] = catalog.Subscription{ID: b, TenantID: "globex", UpdatedAt: v2, Name: "renamed"}
	got, err = c.resolve(ctx, []queue.ClaimedJob{job(a, v1), job(b, v2)}, now)
	if err != nil || len(reads) != 2 || len(reads[1]) != 1 || reads[1][0] != b || got[1].sub.Name != "renamed" {
		t.Fatalf("newer version: reads %v, %v", reads, err)
	}
	// A claim that saw the older version still gets the newer row.
	if got, _ := c.resolve(ctx, []queue.ClaimedJob{job(b, v1)}, now); got[0].sub.Name != "renamed" || len(reads) != 2 {
		t.Errorf("an older claim read again or got the older row")
	}

	// Idle entries are forgotten and read again when named.
	c.evictIdle(now.Add(time.Hour), time.Minute)
	if _, err := c.resolve(ctx, []queue.ClaimedJob{job(a, v1)}, now); err != nil || len(reads) != 3 {
		t.Errorf("evicted subscription not read again: %v, %v", reads, err)
	}

	// A job whose subscription has no row is an error, not a nil row.
	if _, err := c.resolve(ctx, []queue.ClaimedJob{job(uuid.New(), v1)}, now); err == nil {
		t.Error("a job without a subscription row resolved")
	}
	readErr := errors.New("database down")
	failing := newSubscriptionCache(func(context.Context, []uuid.UUID) ([]catalog.Subscription, error) { return nil, readErr }, slog.New(slog.DiscardHandler))
	if _, err := failing.resolve(ctx, []queue.ClaimedJob{job(a, v1)}, now); !errors.Is(err, readErr) {
		t.Errorf("read error = %v, want it passed on", err)
	}
}

func TestFairQueueServesTenantsInTurn(t *testing.T) {
	q := newFairQueue(inFlightLimits{}, time.Now)
	job := func(tenant string, n int) queuedJob {
		return queuedJob{ClaimedJob: queue.ClaimedJob{TenantID: tenant, Attempts: n},
			sub: &catalog.Subscription{TenantID: tenant, Destination: "https://" + tenant + ".example:443"}}
	}
	ctx := context.Background()
	taken := func(n int) []string {
		var got []string
		for range n {
			j, ok := q.take(ctx)
			if !ok {
				t.Fatal("take ended with jobs queued")
			}
			got = append(got, fmt.Sprintf("%s%d", j.TenantID, j.Attempts))
		}
		return got
	}

	// A noisy tenant's backlog, then a quiet tenant's one job: the quiet
	// job is served next, not after the backlog.
	q.push(job("a", 1), job("a", 2), job("a", 3), job("a", 4))
	q.push(job("b", 1))
	if got, want := taken(3), []string{"b1", "a1", "a2"}; !slices.Equal(got, want) {
		t.Errorf("took %v, want %v", got, want)
	}
	// Tenants interleave in one push too, newcomers in the order they
	// came, each tenant's jobs in their own order.
	q.push(job("c", 1), job("c", 2), job("b", 2))
	if got, want := taken(5), []string{"c1", "b2", "a3", "c2", "a4"}; !slices.Equal(got, want) {
		t.Errorf("took %v, want %v", got, want)
	}
	if n := q.len(); n != 0 {
		t.Errorf("%d jobs left, want none", n)
	}

	// A claim that lands after a later one still goes first: each
	// tenant's jobs wait in event order.
	seqJob := func(tenant string, seq int64) queuedJob {
		j := job(tenant, int(seq))
		j.Event.Seq = seq
		return j
	}
	q.push(seqJob("d", 5), seqJob("d", 6))
	q.push(seqJob("d", 1), seqJob("d", 2))
	if got, want := taken(4), []string{"d1", "d2", "d5", "d6"}; !slices.Equal(got, want) {
		t.Errorf("took %v, want %v", got, want)
	}

	// drain empties the queue whatever the turn.
	q.push(job("a", 5), job("b", 3), job("a", 6))
	if got := q.drain(); len(got) != 3 || q.len() != 0 {
		t.Errorf("drain returned %d jobs and left %d", len(got), q.len())
	}
}

func TestFairQueueWakesEveryWaitingWorker(t *testing.T) {
	q := newFairQueue(inFlightLimits{}, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	const workers = 4
	got := make(chan queuedJob, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			if j, ok := q.take(ctx); ok {
				got <- j
			}
		})
	}
	// One push of several jobs must reach every waiting worker, not only
	// the one its signal woke.
	jobs := make([]queuedJob, workers)
	for i := range jobs {
		jobs[i].TenantID = "acme"
		jobs[i].sub = &catalog.Subscription{TenantID: "acme", Destination: "https://acme.example:443"}
	}
	q.push(jobs...)
	for range workers {
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("a waiting worker was not woken")
		}
	}
	// A worker waiting on an empty queue returns once ctx ends.
	ended := make(chan bool)
	go func() { _, ok := q.take(ctx); ended <- ok }()
	cancel()
	if ok := <-ended; ok {
		t.Error("take returned a job from an empty queue after ctx ended")
	}
	wg.Wait()
}

func TestClaimSizeFollowsThePace(t *testing.T) {
	const batch = 16
	cases := []struct {
		name      string
		perSecond float64
		claim     time.Duration
		want      int
	}{
		{name: "no claim measured yet: the batch", perSecond: 100, want: batch},
		{name: "fast destinations: the batch", perSecond: 8000, claim: 1500 * time.Microsecond, want: batch},
		{name: "four claims' worth at 1,000 jobs/s", perSecond: 1000, claim: 2 * time.Millisecond, want: 8},
		{name: "slow destinations: one job", perSecond: 20, claim: 2 * time.Millisecond, want: 1},
		{name: "idle: one job", perSecond: 0, claim: 2 * time.Millisecond, want: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := claimSize(batch, tc.perSecond, tc.claim); got != tc.want {
				t.Errorf("claimSize(%v/s, %v per claim) = %d, want %d", tc.perSecond, tc.claim, got, tc.want)
			}
		})
	}
}

// The pace follows what the workers take: one slow destination beside
// fast ones does not shrink the claims, an idle spell does, and a busy
// spell after it grows them back to the batch within a few claims.
func TestPaceMeasuresTheTakeRate(t *testing.T) {
	const batch = 16
	var p pace
	p.claimTook(2 * time.Millisecond)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if got := p.claimSize(batch, now); got != batch {
		t.Fatalf("first claim = %d, want the batch", got)
	}
	// 10ms between claims: fast destinations take 80 jobs, a slow one 1.
	for range 20 {
		for range 81 {
			p.jobTaken()
		}
		now = now.Add(10 * time.Millisecond)
		p.claimSize(batch, now)
	}
	if got := p.estimate(batch); got != batch {
		t.Errorf("fast beside slow: claims of %d, want the batch", got)
	}
	// Idle: claims every 250ms take nothing.
	for range 40 {
		now = now.Add(250 * time.Millisecond)
		p.claimSize(batch, now)
	}
	if got := p.estimate(batch); got != 1 {
		t.Errorf("idle: claims of %d, want 1", got)
	}
	// Busy again: each claim's jobs are taken before the next (2ms apart).
	claims := 0
	for size := p.claimSize(batch, now); size < batch; claims++ {
		if claims > 40 {
			t.Fatalf("claims still of %d after %d busy claims", size, claims)
		}
		for range size {
			p.jobTaken()
		}
		now = now.Add(time.Millisecond)
		size = p.claimSize(batch, now)
	}
	t.Logf("back to the batch after %d claims", claims)
}
