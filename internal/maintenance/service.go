// Package maintenance runs the periodic upkeep of `hubctl serve`, one named
// service per job: each has its own interval, its leader rule (which
// instance runs it), its metrics and its test. Services lists them for a
// role; a Runner runs them with the hub (docs/architecture.md,
// Maintenance).
package maintenance

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/store/lifecycle"
)

// Leader says which instances run a service.
type Leader int

const (
	// EveryInstance runs the service in every process: it works on the
	// process's own state, or its readings are the process's metrics.
	EveryInstance Leader = iota + 1
	// OneInstance runs the service under the retention lock, in one
	// process at a time: concurrent runs would collide or only repeat
	// each other's work.
	OneInstance
)

// Service is one periodic maintenance job.
type Service struct {
	// Name labels the service's logs and its runs metric.
	Name string
	// Interval is the time from the end of one run to the start of the
	// next.
	Interval time.Duration
	Leader   Leader
	// RunOnce does one run as of now. An error is logged and counted; the
	// service runs again at its next interval.
	RunOnce func(ctx context.Context, now time.Time) error
	// Stop, when set, runs once as the runner stops, with a context of a
	// few seconds that outlives the runner's.
	Stop func(ctx context.Context)
}

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	// Lifecycle provides the retention lock of OneInstance services.
	Lifecycle *lifecycle.Store
	Logger    *slog.Logger
	// Registerer receives streaming_hub_maintenance_runs_total; nil
	// registers nothing.
	Registerer prometheus.Registerer
	// Now is the clock each run is given; nil means time.Now.
	Now func() time.Time
	// lock runs fn under the leader lock; nil means the store's retention
	// lock. Tests replace it.
	lock func(ctx context.Context, fn func() error) error
}

// Runner runs services until its context ends.
type Runner struct {
	services []Service
	opts     RunnerOptions
	runs     *prometheus.CounterVec
}

// Outcomes of a run, the outcome label of streaming_hub_maintenance_runs_total.
const (
	outcomeOK      = "ok"
	outcomeFailed  = "failed"
	outcomeSkipped = "skipped" // another instance held the leader lock
)

// NewRunner builds a runner of services and registers its metric.
func NewRunner(opts RunnerOptions, services []Service) (*Runner, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Logger = opts.Logger.With(slog.String("component", "maintenance"))
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.lock == nil {
		opts.lock = opts.Lifecycle.WithRetentionLock
	}
	for _, s := range services {
		if s.Name == "" || s.Interval <= 0 || s.RunOnce == nil || (s.Leader != EveryInstance && s.Leader != OneInstance) {
			return nil, errors.New("maintenance: service " + s.Name + " needs a name, an interval, a leader rule and RunOnce")
		}
	}
	runs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "streaming_hub_maintenance_runs_total",
		Help: "Runs of each maintenance service by outcome: ok, failed, or skipped while another instance held the retention lock.",
	}, []string{"service", "outcome"})
	if err := register(opts.Registerer, runs); err != nil {
		return nil, err
	}
	return &Runner{services: services, opts: opts, runs: runs}, nil
}

// Run runs every service at once and then every interval until ctx ends,
// then stops them. The services take turns on two goroutines, each in list
// order: the EveryInstance ones, whose runs are single short statements,
// and the OneInstance ones, which share the retention lock and can run
// long (a prune), so partitions are created before the inbox sequence
// moves into them and a prune never holds up lease recovery. Two at a
// time also bounds what maintenance takes of the connection pool, which
// ingest and dispatch need: a goroutine per service would take a
// connection each at every start.
func (r *Runner) Run(ctx context.Context) error {
	var everyInstance, leaders []Service
	for _, s := range r.services {
		if s.Leader == OneInstance {
			leaders = append(leaders, s)
		} else {
			everyInstance = append(everyInstance, s)
		}
	}
	done := make(chan struct{})
	running := 0
	for _, group := range [][]Service{everyInstance, leaders} {
		if len(group) == 0 {
			continue
		}
		running++
		go func() { r.loop(ctx, group); done <- struct{}{} }()
	}
	for range running {
		<-done
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	for _, s := range r.services {
		if s.Stop != nil {
			s.Stop(stopCtx)
		}
	}
	return nil
}

// loop runs group's services in list order whenever one is due.
func (r *Runner) loop(ctx context.Context, group []Service) {
	due := make([]time.Time, len(group))
	failing := make([]bool, len(group))
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		next := time.Time{}
		for i, s := range group {
			if time.Now().Before(due[i]) {
				next = earliest(next, due[i])
				continue
			}
			err := r.RunOnce(ctx, s)
			if ctx.Err() != nil {
				return
			}
			failing[i] = r.logTransition(s, err, failing[i])
			due[i] = time.Now().Add(s.Interval)
			next = earliest(next, due[i])
		}
		timer.Reset(time.Until(next))
	}
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// RunOnce runs s once, under the retention lock when s runs in one
// instance at a time, and counts the outcome. A run cut short by ctx ending
// is not counted.
func (r *Runner) RunOnce(ctx context.Context, s Service) error {
	run := func() error { return s.RunOnce(ctx, r.opts.Now()) }
	var err error
	if s.Leader == OneInstance {
		err = r.opts.lock(ctx, run)
	} else {
		err = run()
	}
	switch {
	case ctx.Err() != nil:
	case errors.Is(err, lifecycle.ErrRetentionBusy):
		r.runs.WithLabelValues(s.Name, outcomeSkipped).Inc()
		r.opts.Logger.Debug("maintenance skipped: another instance is running it", "service", s.Name)
	case err != nil:
		r.runs.WithLabelValues(s.Name, outcomeFailed).Inc()
	default:
		r.runs.WithLabelValues(s.Name, outcomeOK).Inc()
	}
	return err
}

// logTransition logs a service's first failure and its first success
// after failures, not every failed run of an outage; it returns whether s
// is failing now.
func (r *Runner) logTransition(s Service, err error, failing bool) bool {
	log := r.opts.Logger
	switch {
	case errors.Is(err, lifecycle.ErrRetentionBusy):
		return failing
	case err != nil && !failing:
		log.Warn("maintenance run failed; trying again every interval", "service", s.Name, "interval", s.Interval, "error", err)
		return true
	case err != nil:
		log.Debug("maintenance run failed again", "service", s.Name, "error", err)
		return true
	case failing:
		log.Info("maintenance works again", "service", s.Name)
	}
	return false
}

// register registers cs on reg; a nil reg registers nothing.
func register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	if reg == nil {
		return nil
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
