package maintenance

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/store/oncall"
)

// backlogCount reads the delivery backlog per tenant, the auto-disabled
// subscriptions and the blocked ordering keys for the on-call gauges.
//
// Leader: every delivering instance: each process serves the readings as
// its own metrics (docs/observability.md: take max across instances).
func backlogCount(o Options) (Service, error) {
	limit := o.TenantLimit
	if limit <= 0 {
		limit = DefaultTenantLimit
	}
	dueJobs := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "streaming_hub_dispatch_due_jobs",
		Help: "Pending delivery jobs whose next attempt is due, across all processes, as last counted by this one.",
	})
	backlog := newBacklogCollector()
	autoDisabled := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "streaming_hub_subscriptions_autodisabled",
		Help: "Live subscriptions switched off after a sustained failure span, across all processes, as last counted by this one.",
	})
	blockedKeys := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "streaming_hub_ordering_blocked_keys",
		Help: "Ordering keys of ordered subscriptions whose next delivery has failed and waits for its retry, holding the key's later deliveries back, across all processes, as last counted by this one.",
	})
	if err := register(o.Registerer, dueJobs, backlog, autoDisabled, blockedKeys); err != nil {
		return Service{}, err
	}
	return Service{
		Name: "backlog_count", Interval: o.ReapInterval, Leader: EveryInstance,
		RunOnce: func(ctx context.Context, now time.Time) error {
			tenants, err := o.OnCall.BacklogByTenant(ctx, now)
			if err != nil {
				return fmt.Errorf("reading the delivery backlog: %w", err)
			}
			var due int64
			for _, b := range tenants {
				due += b.Due
			}
			dueJobs.Set(float64(due))
			backlog.set(boundTenants(tenants, limit, now))
			n, err := o.OnCall.AutoDisabledSubscriptions(ctx)
			if err != nil {
				return fmt.Errorf("counting auto-disabled subscriptions: %w", err)
			}
			autoDisabled.Set(float64(n))
			if n, err = o.OnCall.OrderingBlockedKeys(ctx); err != nil {
				return fmt.Errorf("counting blocked ordering keys: %w", err)
			}
			blockedKeys.Set(float64(n))
			return nil
		},
	}, nil
}

// OtherTenants is the tenant label of the backlog of every tenant past the
// metrics' tenant limit.
const OtherTenants = "other"

// DefaultTenantLimit is STREAMING_HUB_METRICS_TENANT_LIMIT's default.
const DefaultTenantLimit = 20

// tenantBacklog is one series of the per-tenant backlog metrics.
type tenantBacklog struct {
	tenant    string
	pending   float64
	due       float64
	oldestDue float64 // seconds the oldest due job has waited; 0 when none is due
}

// boundTenants turns the backlog of every tenant (largest first, as
// oncall.BacklogByTenant reads it) into at most limit series of their own
// and one "other" series that sums the rest, keeping its oldest wait. The
// label's cardinality is bounded by the setting whatever the number of
// tenants. A tenant that is itself named "other" is folded into the bucket.
func boundTenants(backlog []oncall.TenantBacklog, limit int, now time.Time) []tenantBacklog {
	var out []tenantBacklog
	other := tenantBacklog{tenant: OtherTenants}
	hasOther := false
	for _, b := range backlog {
		s := tenantBacklog{tenant: b.TenantID, pending: float64(b.Pending), due: float64(b.Due)}
		if !b.OldestDue.IsZero() {
			s.oldestDue = max(now.Sub(b.OldestDue).Seconds(), 0)
		}
		if len(out) < limit && b.TenantID != OtherTenants {
			out = append(out, s)
			continue
		}
		hasOther = true
		other.pending += s.pending
		other.due += s.due
		other.oldestDue = max(other.oldestDue, s.oldestDue)
	}
	if hasOther {
		out = append(out, other)
	}
	return out
}

// backlogCollector serves the last backlog reading as three gauge families.
// It is a collector rather than gauge vectors so that a scrape always sees
// one whole reading: tenants whose backlog drained disappear with the
// reading that no longer has them, never half-way through a reset.
type backlogCollector struct {
	pending, due, oldest *prometheus.Desc

	mu      sync.Mutex
	reading []tenantBacklog
}

func newBacklogCollector() *backlogCollector {
	return &backlogCollector{
		pending: prometheus.NewDesc("streaming_hub_delivery_backlog_jobs",
			"Delivery jobs not yet settled (pending, due or scheduled, and in flight), by tenant; tenants past STREAMING_HUB_METRICS_TENANT_LIMIT are summed under tenant=\"other\". Across all processes, as last read by this one.",
			[]string{"tenant"}, nil),
		due: prometheus.NewDesc("streaming_hub_delivery_due_jobs",
			"Pending delivery jobs whose next attempt is due, by tenant (bounded as streaming_hub_delivery_backlog_jobs).",
			[]string{"tenant"}, nil),
		oldest: prometheus.NewDesc("streaming_hub_delivery_oldest_due_age_seconds",
			"How long the job due the longest has waited past its due time, by tenant (bounded as streaming_hub_delivery_backlog_jobs); 0 when none is due.",
			[]string{"tenant"}, nil),
	}
}

func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.due
	ch <- c.oldest
}

func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	reading := c.reading
	c.mu.Unlock()
	for _, s := range reading {
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, s.pending, s.tenant)
		ch <- prometheus.MustNewConstMetric(c.due, prometheus.GaugeValue, s.due, s.tenant)
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, s.oldestDue, s.tenant)
	}
}

func (c *backlogCollector) set(reading []tenantBacklog) {
	c.mu.Lock()
	c.reading = reading
	c.mu.Unlock()
}
