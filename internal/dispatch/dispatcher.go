package dispatch

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/autodisable"
	"github.com/hubctl/hubctl/internal/backoff"
	"github.com/hubctl/hubctl/internal/breaker"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/opevents"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/internal/store/oncall"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/tracing"
)

// Defaults for the options the configuration does not carry.
const (
	DefaultLeaseMargin  = 15 * time.Second
	DefaultDrainTimeout = 30 * time.Second

	defaultWorkers                = 8
	defaultMaxInFlight            = 256
	defaultTenantMaxInFlight      = 64
	defaultDestinationMaxInFlight = 16
	defaultClaimBatch             = 64
	defaultIdleInterval           = 250 * time.Millisecond

	// maxBackoff caps the wait after a failed claim or lost LISTEN
	// connection: the database is what is struggling, and every process
	// would otherwise hammer it in step.
	maxBackoff = 5 * time.Second

	// queueAllowance is added to every lease for the time a claimed job
	// may wait in the local queue before a worker takes it. A job that
	// waited longer (its destinations are slow) no longer has a full
	// attempt and its recording inside the lease, and is released instead
	// of attempted.
	queueAllowance = 10 * time.Second

	// maxRecordBatch bounds the successes recorded in one transaction;
	// successQueue bounds those waiting for it, so a slow database holds
	// the workers back instead of piling up results in memory.
	maxRecordBatch = 256
	successQueue   = 2 * maxRecordBatch

	// claimers is how many claims may be in flight at once. One claim's
	// round trip (the statement, then its commit's WAL flush) lasts longer
	// than fast destinations take to drain a batch: with one claim at a
	// time the workers would sit idle during every claim, capping
	// throughput at one batch per claim round trip. Two overlap so that the
	// next batch is on its way while the last one is worked off.
	claimers = 2

	// stallAfter is how long a tenant's queued jobs may wait on caps that
	// start no attempt before claims pass the tenant over and its queued
	// jobs stop counting against the queue's room (tenantStalled): more of
	// its jobs would only fill the queue for everyone. A cap that moves
	// at all starts an attempt far more often than this; the queue
	// allowance is far longer, so a stalled tenant is passed over long
	// before its jobs must be released.
	stallAfter = 500 * time.Millisecond
)

// Options configure a Dispatcher.
type Options struct {
	// Queue claims, records and hands back jobs and wakes on new ones.
	Queue *queue.Store
	// Catalog reads the subscriptions of claimed jobs.
	Catalog *catalog.Store
	// Lifecycle tells of tenant purges, whose claimed jobs are canceled.
	Lifecycle *lifecycle.Store
	// OnCall tells which stored breakers' destinations are still in use.
	OnCall *oncall.Store
	// OpenSink opens a subscription's sink with its secrets decrypted
	// (sinkopen.Opener.Open, shared with verification).
	OpenSink func(catalog.Subscription) (sink.Sink, error)
	// Dispatch sizes the pool; zero fields take the documented defaults (docs/configuration.md).
	Dispatch    config.DispatchConfig
	Breaker     config.BreakerConfig
	AutoDisable config.AutoDisableConfig
	// Logger receives ids and outcomes, never payloads or secrets. Nil
	// discards.
	Logger *slog.Logger
	// Registerer receives dispatch's metrics; nil leaves them unregistered.
	Registerer prometheus.Registerer
	// Clock stamps attempts, leases and breakers; nil means time.Now.
	Clock func() time.Time
	// Owner names this process on its leases; "" means DefaultOwner().
	Owner string
	// LeaseMargin is added to a subscription's attempt_timeout to form the
	// lease; 0 means DefaultLeaseMargin.
	LeaseMargin time.Duration
	// DrainTimeout bounds waiting for attempts in flight once Run's
	// context ends; 0 means DefaultDrainTimeout.
	DrainTimeout time.Duration
	// Rand draws retry jitter in [0, 1); nil means math/rand/v2.
	Rand func() float64
	// Tracing receives a span per attempt; nil is tracing off.
	Tracing *tracing.Tracing
	// TypePrefix starts the ce type of operational events
	// (STREAMING_HUB_TYPE_PREFIX); "" is the default prefix.
	TypePrefix string
	// DeadLetterWindow is how long dead letters gather into one report;
	// 0 means DefaultDeadLetterWindow.
	DeadLetterWindow time.Duration
	// RelayOperational keeps operational events for the operational
	// topic's relay (STREAMING_HUB_OPERATIONAL_TOPIC is set).
	RelayOperational bool
}

// Dispatcher claims due delivery jobs and attempts them. Build it with New
// and start it with Run, once.
type Dispatcher struct {
	jobs        *queue.Store // the job statements; queue is the fair queue of claimed jobs
	lifecycle   *lifecycle.Store
	oncall      *oncall.Store
	log         *slog.Logger
	clock       func() time.Time
	owner       string
	cfg         config.DispatchConfig
	autoDisable queue.AutoDisable
	report      reporter
	margin      time.Duration
	drain       time.Duration
	rnd         func() float64
	breakers    *breaker.Set
	sinks       *sinkCache
	subs        *subscriptionCache
	purges      *purgeFences
	metrics     *metrics
	tracing     *tracing.Tracing

	// queue holds claimed jobs no worker has started yet, handed out in
	// turns by tenant within the in-flight caps. Apart from the jobs of
	// stalled tenants it holds at most workers + claimers × claim batch:
	// a claim starts only while the queue and the claims already in flight
	// leave room for it (see claimRoom).
	queue *fairQueue
	// attempts are the attempts running, each on a goroutine of its own.
	attempts sync.WaitGroup
	// room is signalled when room in the queue may have appeared: a worker
	// took a job, or a claim in flight gave back its reservation.
	room chan struct{}

	// claimMu guards the claimers' shared state: the jobs promised by
	// claims in flight, and the tenant the last claim stopped at.
	claimMu  sync.Mutex
	reserved int
	resume   string
	pace     pace
	// handoffOpen is true while handed jobs are taken (handoff.go).
	handoffOpen bool
	// successes carries successful attempts to the recorder, which
	// commits them many at a time.
	successes chan success
	// wake is signalled when new jobs may be due: a notification, a
	// recovered lease.
	wake chan struct{}

	started atomic.Bool
}

// New builds a dispatcher; nothing runs before Run.
func New(opts Options) (*Dispatcher, error) {
	if opts.Queue == nil || opts.Catalog == nil || opts.Lifecycle == nil || opts.OnCall == nil || opts.OpenSink == nil {
		return nil, errors.New("dispatch: the queue, catalog, lifecycle and on-call statements and a sink opener are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Owner == "" {
		opts.Owner = DefaultOwner()
	}
	cfg := opts.Dispatch
	cfg.Workers = orDefault(cfg.Workers, defaultWorkers)
	cfg.MaxInFlight = orDefault(cfg.MaxInFlight, defaultMaxInFlight)
	cfg.TenantMaxInFlight = min(orDefault(cfg.TenantMaxInFlight, defaultTenantMaxInFlight), cfg.MaxInFlight)
	cfg.DestinationMaxInFlight = min(orDefault(cfg.DestinationMaxInFlight, defaultDestinationMaxInFlight), cfg.TenantMaxInFlight)
	cfg.ClaimBatch = orDefault(cfg.ClaimBatch, defaultClaimBatch)
	if cfg.IdleInterval <= 0 {
		cfg.IdleInterval = defaultIdleInterval
	}
	log := opts.Logger.With(slog.String("component", "dispatch"))
	d := &Dispatcher{
		jobs:        opts.Queue,
		lifecycle:   opts.Lifecycle,
		oncall:      opts.OnCall,
		log:         log,
		clock:       opts.Clock,
		owner:       opts.Owner,
		cfg:         cfg,
		autoDisable: autoDisableBy(autodisable.Policy{Enabled: opts.AutoDisable.Enabled, Window: opts.AutoDisable.FailureWindow, Spread: opts.AutoDisable.FailureSpread}),
		margin:      positiveOr(opts.LeaseMargin, DefaultLeaseMargin),
		drain:       positiveOr(opts.DrainTimeout, DefaultDrainTimeout),
		rnd:         opts.Rand,
		tracing:     opts.Tracing,
		sinks:       newSinkCache(opts.OpenSink, log),
		subs:        newSubscriptionCache(opts.Catalog.SubscriptionsByID, log),
		purges:      newPurgeFences(),
		queue:       newFairQueue(inFlightLimits{total: cfg.MaxInFlight, tenant: cfg.TenantMaxInFlight, destination: cfg.DestinationMaxInFlight}, opts.Clock),
		room:        make(chan struct{}, 1),
		successes:   make(chan success, successQueue),
		wake:        make(chan struct{}, 1),
	}
	d.report = reporter{events: opevents.Builder{TypePrefix: typePrefix(opts.TypePrefix), Relay: opts.RelayOperational},
		failingAfter: opts.Breaker.Failures, window: positiveOr(opts.DeadLetterWindow, DefaultDeadLetterWindow)}
	d.breakers = breaker.New(breaker.Config{
		Failures: opts.Breaker.Failures,
		Cooldown: opts.Breaker.Cooldown,
		OnTransition: func(t breaker.Transition) {
			log.Info("circuit breaker "+t.To.String(), "breaker", t.Key, "from", t.From.String())
		},
	})
	m, err := newMetrics(opts.Registerer, func() float64 { return float64(d.breakers.OpenCount()) })
	if err != nil {
		return nil, fmt.Errorf("dispatch: register metrics: %w", err)
	}
	d.metrics = m
	return d, nil
}

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

func positiveOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// DefaultOwner names this process on its leases: host, pid and a random
// suffix, so a restarted process with a recycled pid is still someone else.
func DefaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	suffix := make([]byte, 4)
	_, _ = cryptorand.Read(suffix) // never fails (crypto/rand)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(suffix))
}

// Owner is the lease owner this dispatcher claims as.
func (d *Dispatcher) Owner() string { return d.owner }

// Run dispatches until ctx ends, then stops claiming, waits up to the drain
// timeout for attempts in flight, releases the claimed jobs nobody
// started, records the successes not yet recorded, and returns nil.
// Attempts run on a context of their own so that shutdown does not cut
// them short; one still running after the drain timeout is cancelled and
// left unrecorded, and its lease expires.
func (d *Dispatcher) Run(ctx context.Context) error {
	if !d.started.CompareAndSwap(false, true) {
		return errors.New("dispatch: Run called twice")
	}
	attemptCtx, cancelAttempts := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelAttempts()
	recordCtx, cancelRecording := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRecording()
	var background, workers, recorder sync.WaitGroup
	background.Go(func() { d.listen(ctx) })
	background.Go(func() { d.listenPurges(ctx) })
	recorder.Go(func() { d.recordSuccesses(recordCtx) })
	for range d.cfg.Workers {
		workers.Go(func() { d.work(ctx, attemptCtx) })
	}
	d.log.Info("dispatch started", "owner", d.owner, "workers", d.cfg.Workers, "claim_batch", d.cfg.ClaimBatch,
		"max_in_flight", d.cfg.MaxInFlight, "tenant_max_in_flight", d.cfg.TenantMaxInFlight,
		"destination_max_in_flight", d.cfg.DestinationMaxInFlight)
	d.claimMu.Lock()
	d.handoffOpen = true
	d.claimMu.Unlock()

	d.claimLoop(ctx)
	d.closeHandoff()

	workers.Wait()
	if !waitWithin(&d.attempts, d.drain) {
		d.log.Warn("drain timeout reached; attempts still running are abandoned to lease expiry", "timeout", d.drain)
		cancelAttempts()
		d.attempts.Wait()
	}
	d.releaseUnstarted(recordCtx)
	close(d.successes)
	if !waitWithin(&recorder, d.drain) {
		d.log.Warn("drain timeout reached while recording successes; their leases will expire and the jobs be retried", "timeout", d.drain)
		cancelRecording()
		recorder.Wait()
	}
	background.Wait()
	d.sinks.closeAll()
	d.log.Info("dispatch stopped")
	return nil
}

// waitWithin waits for wg up to timeout; it reports whether wg finished.
func waitWithin(wg *sync.WaitGroup, timeout time.Duration) bool {
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-finished:
		return true
	case <-timer.C:
		return false
	}
}

// claimLoop claims jobs into the queue with up to claimers claims in
// flight, until ctx ends.
func (d *Dispatcher) claimLoop(ctx context.Context) {
	var claiming sync.WaitGroup
	for range claimers {
		claiming.Go(func() { d.claimer(ctx) })
	}
	claiming.Wait()
}

// claimer makes claims one after another whenever there is room for one.
func (d *Dispatcher) claimer(ctx context.Context) {
	failures := 0
	idle := time.NewTimer(0)
	defer idle.Stop()
	for {
		size, ok := d.reserveRoom(ctx)
		if !ok {
			return
		}
		// A signal that came before this claim is answered by it.
		select {
		case <-d.wake:
		default:
		}
		// A claim that has started is seen through even when shutdown
		// begins meanwhile: cut short after the database committed it, its
		// jobs would sit in flight until their leases expired. Queued, they
		// are released with the rest of the queue.
		claimCtx, cancelClaim := context.WithTimeout(context.WithoutCancel(ctx), d.drain)
		started := time.Now()
		res, jobs, err := d.claim(claimCtx, size)
		cancelClaim()
		if err != nil {
			d.unreserve(size, "")
			if ctx.Err() != nil {
				return
			}
			failures++
			wait := backoff.Policy{Min: d.cfg.IdleInterval, Max: maxBackoff}.Delay(failures-1, d.jitter())
			d.log.Warn("claiming jobs failed; retrying", "error", err, "retry_in", wait)
			if !backoff.Sleep(ctx, wait) {
				return
			}
			continue
		}
		failures = 0
		d.pace.claimTook(time.Since(started))
		d.metrics.rateLimited.Add(float64(res.RateLimited))
		settled := res.Canceled + res.Disabled + res.Orphaned
		if settled > 0 {
			d.log.Info("jobs settled at claim without an attempt",
				"canceled", res.Canceled, "subscription_disabled", res.Disabled, "missing_event", res.Orphaned)
		}
		d.queue.push(jobs...)
		d.unreserve(size, res.Resume)
		if len(res.Jobs) > 0 || settled+res.RateLimited+res.Parked > 0 {
			// Work was found, so more may be due: a batch is shared
			// between tenants and can come back short while jobs remain,
			// and jobs parked behind their ordering keys (queue.Claim)
			// may have hidden due ones that the next claim reaches.
			continue
		}
		idle.Reset(d.cfg.IdleInterval)
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-idle.C:
		}
	}
}

// claim claims up to size jobs and pairs them with their subscriptions.
// Jobs whose subscriptions cannot be read are handed back before it fails.
func (d *Dispatcher) claim(ctx context.Context, size int) (queue.ClaimResult, []queuedJob, error) {
	now := d.clock()
	res, err := d.jobs.Claim(ctx, queue.ClaimRequest{
		Owner: d.owner, Limit: size, Now: now, After: d.resumeAfter(),
		LeaseMargin: d.margin + queueAllowance, SkipTenants: d.queue.stalled(now.Add(-stallAfter)),
	})
	if err != nil {
		return queue.ClaimResult{}, nil, err
	}
	jobs, err := d.subs.resolve(ctx, res.Jobs, d.clock())
	if err != nil {
		d.releaseClaimed(ctx, res.Jobs)
		return queue.ClaimResult{}, nil, fmt.Errorf("read the subscriptions of claimed jobs: %w", err)
	}
	return res, jobs, nil
}

// claimRoom reports whether a claim of size jobs may start: the queued
// jobs and those promised by claims in flight are down to one job per
// worker plus one claim's worth for each other claimer. So the next claim
// is on its way while a whole claim's worth is still queued, and the queue
// never holds more than workers + claimers × size jobs.
func claimRoom(queued, reserved, workers, size int) bool {
	return queued+reserved <= workers+(claimers-1)*size
}

// reserveRoom waits until a claim may start, sizes it (claimSize) and
// reserves its room. New jobs (a notification) start a claim at once as
// long as its jobs fit the queue's bound, without waiting for the queue to
// drain to claimRoom's mark (why: docs/architecture.md, "Fairness holds up
// to the attempt"). The jobs of stalled tenants do not count: claims pass
// those tenants over. It reports false once ctx ends.
func (d *Dispatcher) reserveRoom(ctx context.Context) (size int, ok bool) {
	newJobs := false
	bound := d.cfg.Workers + claimers*d.cfg.ClaimBatch
	// A tenant stalls as time passes, with no signal: look again then.
	stalling := time.NewTicker(stallAfter)
	defer stalling.Stop()
	for ctx.Err() == nil {
		d.claimMu.Lock()
		queued := d.queuedForRoom()
		size = d.pace.estimate(d.cfg.ClaimBatch)
		if claimRoom(queued, d.reserved, d.cfg.Workers, size) || newJobs && queued+d.reserved+size <= bound {
			// Sized now that it starts, so the rate is measured claim to
			// claim; never past the queue's bound.
			size = min(d.pace.claimSize(d.cfg.ClaimBatch, time.Now()), max(bound-queued-d.reserved, 1))
			d.reserved += size
			d.claimMu.Unlock()
			return size, true
		}
		d.claimMu.Unlock()
		select {
		case <-ctx.Done():
		case <-d.room:
		case <-stalling.C:
		case <-d.wake:
			newJobs = true
		}
	}
	return 0, false
}

// queuedForRoom is the number of queued jobs that bound the claims and
// handovers: those of tenants not stalled.
func (d *Dispatcher) queuedForRoom() int {
	return d.queue.unstalledLen(d.clock().Add(-stallAfter))
}

// unreserve gives back a claim's reservation of size once its jobs are
// queued and notes where the next claim resumes ("" keeps the current
// place).
func (d *Dispatcher) unreserve(size int, resume string) {
	d.claimMu.Lock()
	d.reserved -= size
	if resume != "" {
		d.resume = resume
	}
	d.claimMu.Unlock()
	d.roomMayHaveAppeared()
}

// resumeAfter is the tenant the next claim starts after.
func (d *Dispatcher) resumeAfter() string {
	d.claimMu.Lock()
	defer d.claimMu.Unlock()
	return d.resume
}

func (d *Dispatcher) roomMayHaveAppeared() {
	select {
	case d.room <- struct{}{}:
	default:
	}
}

// work is one worker: until ctx ends it takes queued jobs as the in-flight
// caps allow and starts each one's attempt on a goroutine of its own, so
// that attempts, which wait on the network, never hold a worker.
func (d *Dispatcher) work(ctx, attemptCtx context.Context) {
	for {
		job, ok := d.queue.take(ctx)
		if !ok {
			return
		}
		d.pace.jobTaken()
		d.roomMayHaveAppeared()
		d.attempts.Go(func() {
			defer d.queue.done(job)
			d.attempt(attemptCtx, job)
		})
	}
}

// releaseUnstarted hands back the claimed jobs no worker started, once the
// workers have stopped: they are due again at once, elsewhere or after a
// restart, without waiting for their leases or counting a recovery.
func (d *Dispatcher) releaseUnstarted(ctx context.Context) {
	var jobs []queue.ClaimedJob
	for _, job := range d.queue.drain() {
		jobs = append(jobs, job.ClaimedJob)
	}
	d.releaseClaimed(ctx, jobs)
}

// ReleaseOutwaited hands back the queued jobs whose leases would no longer
// cover an attempt started at next, when the maintenance service looks
// again: their caps held them back past the queue allowance. Released,
// they are due at once for the next claim, and their leases never expire
// unrecorded, which would count a recovery towards poison. A failed
// release is logged; those leases expire and are recovered.
func (d *Dispatcher) ReleaseOutwaited(ctx context.Context, next time.Time) {
	outwaited := d.queue.remove(func(job queuedJob) bool {
		return !leaseCoversAttempt(job.LeaseUntil, next, job.sub.AttemptTimeout, d.margin)
	})
	if len(outwaited) == 0 {
		return
	}
	d.roomMayHaveAppeared()
	jobs := make([]queue.ClaimedJob, len(outwaited))
	for i, job := range outwaited {
		jobs[i] = job.ClaimedJob
	}
	d.releaseClaimed(ctx, jobs)
}

// releaseClaimed hands claimed jobs back untouched, due as they were.
func (d *Dispatcher) releaseClaimed(ctx context.Context, jobs []queue.ClaimedJob) {
	if len(jobs) == 0 {
		return
	}
	ids := make([]uuid.UUID, len(jobs))
	for i, job := range jobs {
		ids[i] = job.ID
	}
	releaseCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.drain)
	defer cancel()
	if n, err := d.jobs.Release(releaseCtx, d.owner, ids); err != nil {
		d.log.Warn("cannot release claimed jobs nobody started; their leases will expire", "jobs", len(ids), "error", err)
	} else {
		d.log.Info("released claimed jobs nobody started", "jobs", n)
	}
}

// Wake wakes the claim loop if it sleeps, when new jobs may be due;
// wake-ups never queue up.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// listen turns ingest's notifications into wake-ups.
func (d *Dispatcher) listen(ctx context.Context) {
	// Jobs may have arrived while nobody listened.
	d.listenLoop(ctx, d.jobs.ListenJobs, "new jobs", "polling every idle interval meanwhile", d.Wake,
		func(string) { d.Wake() })
}

// listenLoop hands every notification of the listener open opens to
// onNote, on a connection of its own that is reopened whenever it is
// lost; onConnect runs at each (re)connection. what names the
// notifications in logs, meanwhile what happens while nobody listens.
func (d *Dispatcher) listenLoop(ctx context.Context, open func(context.Context) (*pg.Listener, error),
	what, meanwhile string, onConnect func(), onNote func(payload string)) {
	failures := 0
	for ctx.Err() == nil {
		l, err := open(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			wait := listenBackoff.Delay(failures-1, d.jitter())
			d.log.Warn("cannot listen for "+what+"; "+meanwhile, "error", err, "retry_in", wait)
			backoff.Sleep(ctx, wait)
			continue
		}
		if failures > 0 {
			d.log.Info("listening for " + what + " again")
		}
		failures = 0
		onConnect()
		for {
			var payload string
			if payload, err = l.Receive(ctx); err != nil {
				break
			}
			onNote(payload)
		}
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = l.Close(closeCtx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		failures++
		d.log.Warn("lost the connection listening for "+what+"; reconnecting", "error", err)
		backoff.Sleep(ctx, listenBackoff.Delay(failures-1, d.jitter()))
	}
}

// listenBackoff spaces the attempts to listen again for new jobs.
var listenBackoff = backoff.Policy{Min: time.Second, Max: maxBackoff}

// jitter draws the random part of a backoff in [0, 1).
func (d *Dispatcher) jitter() float64 {
	if d.rnd != nil {
		return d.rnd()
	}
	return rand.Float64()
}

func typePrefix(prefix string) string {
	if prefix == "" {
		return event.DefaultTypePrefix
	}
	return prefix
}

// autoDisableBy is policy as the store's complete path asks for it.
func autoDisableBy(policy autodisable.Policy) queue.AutoDisable {
	return func(span queue.FailureSpan, finished time.Time) (queue.FailureSpan, bool) {
		next, disable := policy.OnFailure(autodisable.Span(span), finished)
		return queue.FailureSpan(next), disable
	}
}
