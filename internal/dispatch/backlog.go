package dispatch

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/breaker"
	"github.com/hubctl/hubctl/internal/store"
)

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
// store.BacklogByTenant reads it) into at most limit series of their own
// and one "other" series that sums the rest, keeping its oldest wait. The
// label's cardinality is bounded by the setting whatever the number of
// tenants. A tenant that is itself named "other" is folded into the bucket.
func boundTenants(backlog []store.TenantBacklog, limit int, now time.Time) []tenantBacklog {
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

// observeBacklog reads the backlog and the auto-disabled subscriptions
// for the gauges; maintain calls it every reap interval.
func (d *Dispatcher) observeBacklog(ctx context.Context, now time.Time) {
	backlog, err := d.store.BacklogByTenant(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("reading the delivery backlog failed", "error", err)
		}
		return
	}
	var due int64
	for _, b := range backlog {
		due += b.Due
	}
	d.metrics.dueJobs.Set(float64(due))
	d.metrics.backlog.set(boundTenants(backlog, d.tenantLimit, now))
	if n, err := d.store.AutoDisabledSubscriptions(ctx); err == nil {
		d.metrics.autoDisabledSubs.Set(float64(n))
	} else if ctx.Err() == nil {
		d.log.Warn("counting auto-disabled subscriptions failed", "error", err)
	}
	if n, err := d.store.OrderingBlockedKeys(ctx); err == nil {
		d.metrics.blockedKeys.Set(float64(n))
	} else if ctx.Err() == nil {
		d.log.Warn("counting blocked ordering keys failed", "error", err)
	}
}

// Breakers are this process's breakers that are open or half-open, for
// operators and other processes to see.
func (d *Dispatcher) Breakers() []store.BreakerState {
	snap := d.breakers.Snapshot()
	out := make([]store.BreakerState, 0, len(snap))
	for _, s := range snap {
		dest := destinationOf(s.Key)
		state := "open"
		if s.State == breaker.HalfOpen {
			state = "half_open"
		}
		out = append(out, store.BreakerState{Owner: d.owner, TenantID: dest.TenantID, Destination: dest.Destination, State: state, OpenUntil: s.Until})
	}
	return out
}

// forgetUnusedBreakers forgets the open and half-open breakers of
// destinations no enabled, live subscription delivers to any more: they
// take no more attempts, so nothing would close them, and the gauge, `top`
// and `subs get` would count them open until they went idle a day later.
// Closed breakers are left to the idle rule: they are not shown anywhere.
func (d *Dispatcher) forgetUnusedBreakers(ctx context.Context, now time.Time) {
	snap := d.breakers.Snapshot()
	if len(snap) == 0 {
		return
	}
	dests := make([]store.Destination, len(snap))
	for i, s := range snap {
		dests[i] = destinationOf(s.Key)
	}
	unused, err := d.store.UnusedDestinations(ctx, dests)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("looking for breakers of unused destinations failed", "error", err)
		}
		return
	}
	if len(unused) == 0 {
		return
	}
	drop := make(map[string]bool, len(unused))
	for _, u := range unused {
		drop[keyOf(u)] = true
	}
	d.breakers.Forget(func(key string) bool { return drop[key] }, now)
}

// destinationOf is the tenant and destination a breaker key names
// (breakerKey).
func destinationOf(key string) store.Destination {
	tenant, destination, _ := strings.Cut(key, "|")
	return store.Destination{TenantID: tenant, Destination: destination}
}
