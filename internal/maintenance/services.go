package maintenance

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/internal/store/oncall"
	"github.com/hubctl/hubctl/internal/store/queue"
)

// DefaultReapInterval is how often the delivery services run: lease
// recovery, the stranded-key sweep, outwaited releases, unused breakers and
// the backlog count.
const DefaultReapInterval = 5 * time.Second

// defaultPoisonThreshold is STREAMING_HUB_POISON_THRESHOLD's default.
const defaultPoisonThreshold = 5

// Dispatcher is what the delivery services need of this process's
// dispatcher (dispatch.Dispatcher): its in-process state, and waking its
// claims when jobs became due.
type Dispatcher interface {
	Wake()
	ReleaseOutwaited(ctx context.Context, next time.Time)
	ForgetUnusedBreakers(ctx context.Context, now time.Time) error
	EvictIdleCaches(now time.Time)
	Breakers() []oncall.BreakerState
	ReportDeadLetters(ctx context.Context, now time.Time) (int, error)
	ReportPoisoned(ctx context.Context, tx pgx.Tx, poisoned []queue.Poisoned, at time.Time) error
}

// Options are what the services need.
type Options struct {
	Role config.Role
	// Queue recovers expired leases and releases stranded ordering keys.
	Queue *queue.Store
	// Lifecycle creates partitions, prunes and reads storage status.
	Lifecycle *lifecycle.Store
	// OnCall records the heartbeats and reads the backlog readings.
	OnCall *oncall.Store
	Logger *slog.Logger
	// Registerer receives the services' metrics; nil registers none.
	Registerer prometheus.Registerer
	// Gatherer reads this process's metrics for its heartbeat.
	Gatherer prometheus.Gatherer
	// Instance names this process in its heartbeat; HeartbeatAt and Stats
	// are filled in at each beat.
	Instance oncall.Instance
	// Dispatcher is this process's dispatcher; required when Role runs
	// delivery.
	Dispatcher Dispatcher
	// ReapInterval spaces the delivery services' runs; 0 means
	// DefaultReapInterval.
	ReapInterval time.Duration
	// PoisonThreshold is the recoveries after which an expired lease
	// dead-letters its job (STREAMING_HUB_POISON_THRESHOLD); 0 means its
	// default.
	PoisonThreshold int
	// TenantLimit bounds the tenant label of the backlog metrics; 0 means
	// DefaultTenantLimit.
	TenantLimit int
	// Retention is the retention policy and RetentionInterval how often
	// the storage services run (STREAMING_HUB_RETENTION_*).
	Retention         lifecycle.RetentionPolicy
	RetentionInterval time.Duration
	// Now is the clock of what a service stamps after its run (the
	// runner gives each run its start); nil means time.Now.
	Now func() time.Time
}

func (o Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

// Services are the maintenance services of a process of o.Role: the
// heartbeat on every role, the delivery services where the process
// delivers, the storage services on every role. The one-instance services
// among them take turns in this order.
func Services(o Options) ([]Service, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	list := []Service{heartbeat(o)}
	if o.Role.RunsDelivery() {
		delivery, err := Delivery(o)
		if err != nil {
			return nil, err
		}
		list = append(list, delivery...)
	}
	storage, err := storageServices(o)
	if err != nil {
		return nil, err
	}
	return append(list, storage...), nil
}

// Delivery are the services of a process that delivers.
func Delivery(o Options) ([]Service, error) {
	if o.Dispatcher == nil {
		return nil, errors.New("maintenance: the delivery services need the dispatcher")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ReapInterval <= 0 {
		o.ReapInterval = DefaultReapInterval
	}
	if o.PoisonThreshold <= 0 {
		o.PoisonThreshold = defaultPoisonThreshold
	}
	leases, err := leaseRecovery(o)
	if err != nil {
		return nil, err
	}
	stranded, err := strandedKeyRelease(o)
	if err != nil {
		return nil, err
	}
	backlog, err := backlogCount(o)
	if err != nil {
		return nil, err
	}
	return []Service{leases, stranded, outwaitedRelease(o), unusedBreakers(o), backlog, cacheEviction(o), deadLetterReports(o)}, nil
}

func storageServices(o Options) ([]Service, error) {
	prune, err := retentionPrune(o)
	if err != nil {
		return nil, err
	}
	gauges, err := storageGauges(o)
	if err != nil {
		return nil, err
	}
	return []Service{partitionCreation(o), inboxSequenceMove(o), prune, gauges}, nil
}
