package maintenance

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/internal/store/oncall"
	"github.com/hubctl/hubctl/internal/store/queue"
)

// journal records what the services of a test did, in order.
type journal struct {
	mu      sync.Mutex
	entries []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	j.entries = append(j.entries, s)
	j.mu.Unlock()
}

func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.entries)
}

// recording is a service that notes each run with the seconds since start.
func recording(j *journal, name string, interval time.Duration, leader Leader, start time.Time) Service {
	return Service{Name: name, Interval: interval, Leader: leader,
		RunOnce: func(context.Context, time.Time) error {
			j.add(name + "@" + time.Since(start).Round(time.Second).String())
			return nil
		}}
}

func TestRunnerRunsEachServiceAtOnceThenEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		j := &journal{}
		reg := prometheus.NewPedanticRegistry()
		r, err := NewRunner(RunnerOptions{Registerer: reg, lock: func(context.Context, func() error) error {
			t.Error("a service of every instance took the leader lock")
			return nil
		}}, []Service{
			recording(j, "fast", 2*time.Second, EveryInstance, start),
			recording(j, "slow", 5*time.Second, EveryInstance, start),
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		time.Sleep(11 * time.Second)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		var fast, slow []string
		for _, e := range j.list() {
			if e[0] == 'f' {
				fast = append(fast, e)
			} else {
				slow = append(slow, e)
			}
		}
		if want := []string{"fast@0s", "fast@2s", "fast@4s", "fast@6s", "fast@8s", "fast@10s"}; !slices.Equal(fast, want) {
			t.Errorf("fast ran %v, want %v", fast, want)
		}
		if want := []string{"slow@0s", "slow@5s", "slow@10s"}; !slices.Equal(slow, want) {
			t.Errorf("slow ran %v, want %v", slow, want)
		}
		if n := value(r.runs.WithLabelValues("fast", outcomeOK)); n != 6 {
			t.Errorf("runs_total{service=fast,outcome=ok} = %v, want 6", n)
		}
	})
}

func TestRunnerTakesOneInstanceServicesInListOrderUnderTheLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		j := &journal{}
		var held atomic.Bool // another instance holds the lock
		lock := func(_ context.Context, fn func() error) error {
			if held.Load() {
				return lifecycle.ErrRetentionBusy
			}
			j.add("lock")
			return fn()
		}
		stopped := 0
		last := recording(j, "third", time.Minute, OneInstance, start)
		last.Stop = func(ctx context.Context) {
			if ctx.Err() != nil {
				t.Error("Stop got a context already done")
			}
			stopped++
		}
		r, err := NewRunner(RunnerOptions{Registerer: prometheus.NewPedanticRegistry(), lock: lock}, []Service{
			recording(j, "first", time.Minute, OneInstance, start),
			recording(j, "second", time.Minute, OneInstance, start),
			last,
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		synctest.Wait()
		if want := []string{"lock", "first@0s", "lock", "second@0s", "lock", "third@0s"}; !slices.Equal(j.list(), want) {
			t.Errorf("the first round ran %v, want %v", j.list(), want)
		}
		held.Store(true)
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(j.list()); n != 6 {
			t.Errorf("%d entries after a round with the lock held elsewhere, want the first round's 6", n)
		}
		if n := value(r.runs.WithLabelValues("second", outcomeSkipped)); n != 1 {
			t.Errorf("runs_total{service=second,outcome=skipped} = %v, want 1", n)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if stopped != 1 {
			t.Errorf("Stop ran %d times, want once", stopped)
		}
	})
}

func TestRunnerCountsFailuresAndTriesAgainAtTheInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		runs := 0
		r, err := NewRunner(RunnerOptions{Registerer: prometheus.NewPedanticRegistry()}, []Service{{
			Name: "flaky", Interval: time.Second, Leader: EveryInstance,
			RunOnce: func(context.Context, time.Time) error {
				runs++
				if runs <= 2 {
					return errors.New("database away")
				}
				return nil
			},
		}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		time.Sleep(3500 * time.Millisecond)
		synctest.Wait()
		cancel()
		<-done
		if failed, ok := value(r.runs.WithLabelValues("flaky", outcomeFailed)), value(r.runs.WithLabelValues("flaky", outcomeOK)); failed != 2 || ok != 2 {
			t.Errorf("failed %v and ok %v runs, want 2 and 2", failed, ok)
		}
	})
}

func TestRunnerRefusesAnIncompleteService(t *testing.T) {
	for _, s := range []Service{
		{Interval: time.Second, Leader: EveryInstance, RunOnce: func(context.Context, time.Time) error { return nil }},
		{Name: "x", Leader: EveryInstance, RunOnce: func(context.Context, time.Time) error { return nil }},
		{Name: "x", Interval: time.Second, RunOnce: func(context.Context, time.Time) error { return nil }},
		{Name: "x", Interval: time.Second, Leader: EveryInstance},
	} {
		if _, err := NewRunner(RunnerOptions{}, []Service{s}); err == nil {
			t.Errorf("NewRunner accepted %+v", s)
		}
	}
}

func TestServicesOfEachRole(t *testing.T) {
	base := Options{Queue: &queue.Store{}, Lifecycle: &lifecycle.Store{}, Dispatcher: nopDispatcher{}, RetentionInterval: time.Minute}
	storage := []string{"partition_creation", "inbox_sequence_move", "retention_prune", "storage_gauges"}
	delivery := []string{"lease_recovery", "stranded_key_release", "outwaited_release", "unused_breakers", "backlog_count", "cache_eviction", "dead_letter_reports"}
	for role, want := range map[string][]string{
		"ingest":   append([]string{"heartbeat"}, storage...),
		"delivery": slices.Concat([]string{"heartbeat"}, delivery, storage),
		"all":      slices.Concat([]string{"heartbeat"}, delivery, storage),
	} {
		o := base
		o.Role = config.Role(role)
		services, err := Services(o)
		if err != nil {
			t.Fatalf("%s: %v", role, err)
		}
		var names []string
		for _, s := range services {
			names = append(names, s.Name)
		}
		if !slices.Equal(names, want) {
			t.Errorf("role %s runs %v, want %v", role, names, want)
		}
	}
	o := base
	o.Role, o.Dispatcher = config.RoleDelivery, nil
	if _, err := Services(o); err == nil {
		t.Error("the delivery services were built without a dispatcher")
	}
}

// nopDispatcher stands for a dispatcher where only the list matters.
type nopDispatcher struct{}

func (nopDispatcher) Wake()                                                     {}
func (nopDispatcher) ReleaseOutwaited(context.Context, time.Time)               {}
func (nopDispatcher) ForgetUnusedBreakers(context.Context, time.Time) error     { return nil }
func (nopDispatcher) EvictIdleCaches(time.Time)                                 {}
func (nopDispatcher) ReportDeadLetters(context.Context, time.Time) (int, error) { return 0, nil }
func (nopDispatcher) ReportPoisoned(context.Context, pgx.Tx, []queue.Poisoned, time.Time) error {
	return nil
}
func (nopDispatcher) Breakers() []oncall.BreakerState { return nil }

// value reads a counter or gauge.
func value(c prometheus.Metric) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}
