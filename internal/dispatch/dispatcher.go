package dispatch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/breaker"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store"
)

// Defaults for the options the configuration does not carry.
const (
	DefaultLeaseMargin  = 15 * time.Second
	DefaultReapInterval = 5 * time.Second
	DefaultDrainTimeout = 30 * time.Second

	defaultWorkers         = 8
	defaultClaimBatch      = 16
	defaultIdleInterval    = 250 * time.Millisecond
	defaultPoisonThreshold = 5

	// maxBackoff caps the wait after a failed claim or lost LISTEN
	// connection: the database is what is struggling, and every process
	// would otherwise hammer it in step.
	maxBackoff = 5 * time.Second
)

// Options configure a Dispatcher.
type Options struct {
	Store *store.Store
	// Subscriptions opens sinks: it decrypts secrets and credentials.
	Subscriptions *service.Subscriptions
	// Dispatch sizes the pool; zero fields take SPEC's defaults.
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
	// ReapInterval is how often expired leases are recovered and the due
	// backlog counted; 0 means DefaultReapInterval.
	ReapInterval time.Duration
	// DrainTimeout bounds waiting for attempts in flight once Run's
	// context ends; 0 means DefaultDrainTimeout.
	DrainTimeout time.Duration
	// Rand draws retry jitter in [0, 1); nil means math/rand/v2.
	Rand func() float64
}

// Dispatcher claims due delivery jobs and attempts them. Build it with New
// and start it with Run, once.
type Dispatcher struct {
	store    *store.Store
	log      *slog.Logger
	clock    func() time.Time
	owner    string
	cfg      config.DispatchConfig
	policy   store.AutoDisablePolicy
	margin   time.Duration
	reap     time.Duration
	drain    time.Duration
	rnd      func() float64
	breakers *breaker.Set
	sinks    *sinkCache
	metrics  *metrics

	// slots holds one token per idle worker.
	slots chan struct{}
	// wake is signalled when new jobs may be due: a notification, a
	// recovered lease.
	wake     chan struct{}
	inFlight sync.WaitGroup
	started  atomic.Bool
}

// New builds a dispatcher; nothing runs before Run.
func New(opts Options) (*Dispatcher, error) {
	if opts.Store == nil || opts.Subscriptions == nil {
		return nil, errors.New("dispatch: a store and the subscription service are required")
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
	cfg.ClaimBatch = orDefault(cfg.ClaimBatch, defaultClaimBatch)
	cfg.PoisonThreshold = orDefault(cfg.PoisonThreshold, defaultPoisonThreshold)
	if cfg.IdleInterval <= 0 {
		cfg.IdleInterval = defaultIdleInterval
	}
	log := opts.Logger.With(slog.String("component", "dispatch"))
	d := &Dispatcher{
		store:  opts.Store,
		log:    log,
		clock:  opts.Clock,
		owner:  opts.Owner,
		cfg:    cfg,
		policy: store.AutoDisablePolicy{Enabled: opts.AutoDisable.Enabled, Window: opts.AutoDisable.FailureWindow, Spread: opts.AutoDisable.FailureSpread},
		margin: positiveOr(opts.LeaseMargin, DefaultLeaseMargin),
		reap:   positiveOr(opts.ReapInterval, DefaultReapInterval),
		drain:  positiveOr(opts.DrainTimeout, DefaultDrainTimeout),
		rnd:    opts.Rand,
		sinks:  newSinkCache(opts.Subscriptions.OpenSink, log),
		slots:  make(chan struct{}, cfg.Workers),
		wake:   make(chan struct{}, 1),
	}
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
	for range cfg.Workers {
		d.slots <- struct{}{}
	}
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
	_, _ = rand.Read(suffix) // never fails (crypto/rand)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(suffix))
}

// Owner is the lease owner this dispatcher claims as.
func (d *Dispatcher) Owner() string { return d.owner }

// Run dispatches until ctx ends, then stops claiming, waits up to the drain
// timeout for attempts in flight, and returns nil. Attempts run on a
// context of their own so that shutdown does not cut them short; one still
// running after the drain timeout is cancelled and left unrecorded, and its
// lease expires.
func (d *Dispatcher) Run(ctx context.Context) error {
	if !d.started.CompareAndSwap(false, true) {
		return errors.New("dispatch: Run called twice")
	}
	attemptCtx, cancelAttempts := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelAttempts()
	var background sync.WaitGroup
	background.Go(func() { d.listen(ctx) })
	background.Go(func() { d.maintain(ctx) })
	d.log.Info("dispatch started", "owner", d.owner, "workers", d.cfg.Workers, "claim_batch", d.cfg.ClaimBatch)

	d.claimLoop(ctx, attemptCtx)

	finished := make(chan struct{})
	go func() { d.inFlight.Wait(); close(finished) }()
	timer := time.NewTimer(d.drain)
	defer timer.Stop()
	select {
	case <-finished:
	case <-timer.C:
		d.log.Warn("drain timeout reached; attempts still running are abandoned to lease expiry", "timeout", d.drain)
		cancelAttempts()
		<-finished
	}
	background.Wait()
	d.sinks.closeAll()
	d.log.Info("dispatch stopped")
	return nil
}

// claimLoop claims jobs for idle workers until ctx ends.
func (d *Dispatcher) claimLoop(ctx, attemptCtx context.Context) {
	var resume string
	failures := 0
	idle := time.NewTimer(0)
	defer idle.Stop()
	for {
		free, ok := d.takeSlots(ctx)
		if !ok {
			return
		}
		// A signal that came before this claim is answered by it.
		select {
		case <-d.wake:
		default:
		}
		res, err := d.store.Claim(ctx, store.ClaimRequest{
			Owner: d.owner, Limit: free, Now: d.clock(), After: resume, LeaseMargin: d.margin,
		})
		d.giveSlots(free - len(res.Jobs))
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			wait := backoff(failures, d.cfg.IdleInterval)
			d.log.Warn("claiming jobs failed; retrying", "error", err, "retry_in", wait)
			if !sleep(ctx, wait) {
				return
			}
			continue
		}
		failures = 0
		resume = res.Resume
		settled := res.Canceled + res.Disabled + res.Orphaned
		if settled > 0 {
			d.log.Info("jobs settled at claim without an attempt",
				"canceled", res.Canceled, "subscription_disabled", res.Disabled, "missing_event", res.Orphaned)
		}
		for _, job := range res.Jobs {
			d.inFlight.Add(1)
			go d.attempt(attemptCtx, job)
		}
		if len(res.Jobs) > 0 || settled > 0 {
			// Work was found, so more may be due: a batch is shared
			// between tenants and can come back short while jobs remain.
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

// takeSlots waits for at least one idle worker and takes up to a claim
// batch of them.
func (d *Dispatcher) takeSlots(ctx context.Context) (int, bool) {
	select {
	case <-ctx.Done():
		return 0, false
	case <-d.slots:
	}
	n := 1
	for n < d.cfg.ClaimBatch {
		select {
		case <-d.slots:
			n++
		default:
			return n, true
		}
	}
	return n, true
}

func (d *Dispatcher) giveSlots(n int) {
	for range n {
		d.slots <- struct{}{}
	}
}

// signal wakes the claim loop if it sleeps; signals never queue up.
func (d *Dispatcher) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// listen turns ingest's notifications into wake-ups, on a connection of its
// own that is reopened whenever it is lost.
func (d *Dispatcher) listen(ctx context.Context) {
	failures := 0
	for ctx.Err() == nil {
		l, err := d.store.ListenJobs(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			wait := backoff(failures, time.Second)
			d.log.Warn("cannot listen for new jobs; polling every idle interval meanwhile", "error", err, "retry_in", wait)
			sleep(ctx, wait)
			continue
		}
		if failures > 0 {
			d.log.Info("listening for new jobs again")
		}
		failures = 0
		// Jobs may have arrived while nobody listened.
		d.signal()
		for {
			if err = l.Wait(ctx); err != nil {
				break
			}
			d.signal()
		}
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = l.Close(closeCtx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		failures++
		d.log.Warn("lost the connection listening for new jobs; reconnecting", "error", err)
		sleep(ctx, backoff(failures, time.Second))
	}
}

// maintain recovers expired leases, counts the due backlog and closes idle
// sinks, every reap interval.
func (d *Dispatcher) maintain(ctx context.Context) {
	ticker := time.NewTicker(d.reap)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		now := d.clock()
		rec, err := d.store.RecoverExpiredLeases(ctx, now, d.cfg.PoisonThreshold)
		switch {
		case err != nil && ctx.Err() == nil:
			d.log.Warn("recovering expired leases failed", "error", err)
		case rec.Retried+rec.Poisoned > 0:
			d.metrics.recovered.WithLabelValues("retry").Add(float64(rec.Retried))
			d.metrics.recovered.WithLabelValues("poison").Add(float64(rec.Poisoned))
			d.log.Warn("recovered jobs whose lease expired without a result", "retried", rec.Retried, "poison", rec.Poisoned)
			d.signal()
		}
		if due, err := d.store.DueBacklog(ctx, now); err == nil {
			d.metrics.dueJobs.Set(float64(due))
		} else if ctx.Err() == nil {
			d.log.Warn("counting due jobs failed", "error", err)
		}
		d.sinks.evictIdle(now, sinkIdleTimeout)
	}
}

// backoff doubles from base with each consecutive failure, up to maxBackoff.
func backoff(failures int, base time.Duration) time.Duration {
	wait := base
	for i := 1; i < failures && wait < maxBackoff; i++ {
		wait *= 2
	}
	return min(wait, maxBackoff)
}

// sleep waits for d or ctx; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
