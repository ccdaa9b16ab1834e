package dispatch

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/maintenance"
)

// gauge reads one series of a gathered family: the value of the metric
// whose labels include want, and whether there is one.
func gauge(t *testing.T, reg prometheus.Gatherer, name string, want map[string]string) (float64, bool) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, want) {
				switch {
				case m.Gauge != nil:
					return m.GetGauge().GetValue(), true
				case m.Counter != nil:
					return m.GetCounter().GetValue(), true
				case m.Histogram != nil:
					return float64(m.GetHistogram().GetSampleCount()), true
				}
			}
		}
	}
	return 0, false
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, l := range m.GetLabel() {
			found = found || l.GetName() == k && l.GetValue() == v
		}
		if !found {
			return false
		}
	}
	return true
}

// TestOnCallMetricsMove drives the signals on-call pages on through a
// backlog, a broken destination and its recovery, against the real
// database: backlog and oldest-due age per tenant (bounded, with an
// "other" bucket), open breakers, shed jobs, produce-to-delivered latency,
// and auto-disabled subscriptions.
func TestOnCallMetricsMove(t *testing.T) {
	e := newEnv(t)
	broken := newReceiver(t, func(*http.Request, int) int { return http.StatusInternalServerError })
	working := newReceiver(t, nil)
	zeros := slices.Repeat([]string{"0s"}, 8)
	brokenSub, _ := e.webhookSub("t-broken", broken.URL, retrySchedule(zeros...))
	quietSub, _ := e.webhookSub("t-quiet", working.URL)
	tinySub, _ := e.webhookSub("t-tiny", working.URL)
	// The backlog waits past its due time before any dispatcher runs.
	e.insertJobsDue("t-broken", brokenSub, 30, -2*time.Minute)
	e.insertJobsDue("t-quiet", quietSub, 5, -time.Minute)
	e.insertJobsDue("t-tiny", tinySub, 2, -time.Minute)

	reg := prometheus.NewRegistry()
	configure := func(o *Options) {
		o.Registerer = reg
		o.Dispatch.Workers = 1
		o.Dispatch.DestinationMaxInFlight = 1
		o.Breaker = config.BreakerConfig{Failures: 3, Cooldown: time.Hour}
	}
	e.tenantLimit = 2
	idle, err := New(e.options(e.subs, configure))
	if err != nil {
		t.Fatal(err)
	}
	// One reading before anything is delivered, as the backlog service
	// takes it.
	services, err := maintenance.Delivery(maintenance.Options{Queue: e.store.Queue, Lifecycle: e.store.Lifecycle, OnCall: e.store.OnCall, Registerer: reg, Dispatcher: idle, TenantLimit: e.tenantLimit})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(services, func(s maintenance.Service) bool { return s.Name == "backlog_count" })
	if i < 0 {
		t.Fatal("no backlog_count among the delivery services")
	}
	if err := services[i].RunOnce(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	for tenant, want := range map[string]float64{"t-broken": 30, "t-quiet": 5, maintenance.OtherTenants: 2} {
		if got, ok := gauge(t, reg, "streaming_hub_delivery_backlog_jobs", map[string]string{"tenant": tenant}); !ok || got != want {
			t.Errorf("backlog of %s = %v (present %v), want %v", tenant, got, ok, want)
		}
	}
	if _, ok := gauge(t, reg, "streaming_hub_delivery_backlog_jobs", map[string]string{"tenant": "t-tiny"}); ok {
		t.Error("a tenant past the tenant limit has a series of its own")
	}
	if age, _ := gauge(t, reg, "streaming_hub_delivery_oldest_due_age_seconds", map[string]string{"tenant": "t-broken"}); age < 110 || age > 300 {
		t.Errorf("oldest due age of t-broken = %vs, want about 120s", age)
	}

	// The dispatcher runs: the broken destination's breaker opens and sheds
	// the rest of its backlog; the others are delivered.
	reg2 := prometheus.NewRegistry()
	d, _ := e.start(configure, func(o *Options) { o.Registerer = reg2 })
	waitFor(t, "the breaker to open and the healthy backlog to drain", func() bool {
		open, _ := gauge(t, reg2, "streaming_hub_breakers_open", nil)
		_, quietLeft := gauge(t, reg2, "streaming_hub_delivery_backlog_jobs", map[string]string{"tenant": "t-quiet"})
		_, otherLeft := gauge(t, reg2, "streaming_hub_delivery_backlog_jobs", map[string]string{"tenant": maintenance.OtherTenants})
		shed, _ := gauge(t, reg2, "streaming_hub_jobs_shed_total", nil)
		// Latency is observed once a success is recorded, which may trail
		// the backlog reading that no longer counts the job.
		observed, _ := gauge(t, reg2, "streaming_hub_delivery_latency_seconds", nil)
		return open == 1 && !quietLeft && !otherLeft && shed > 0 && observed >= 7
	})
	if n, _ := gauge(t, reg2, "streaming_hub_delivery_latency_seconds", nil); n != 7 {
		t.Errorf("produce-to-delivered latency observed %v deliveries, want the 7 healthy ones", n)
	}
	if failed, _ := gauge(t, reg2, "streaming_hub_deliveries_total", map[string]string{"outcome": "failed"}); failed != 3 {
		t.Errorf("%v failed attempts, want the 3 that opened the breaker", failed)
	}
	waitFor(t, "the broken tenant's backlog to be all scheduled, none due", func() bool {
		pending, _ := gauge(t, reg2, "streaming_hub_delivery_backlog_jobs", map[string]string{"tenant": "t-broken"})
		age, _ := gauge(t, reg2, "streaming_hub_delivery_oldest_due_age_seconds", map[string]string{"tenant": "t-broken"})
		return pending == 30 && age == 0
	})
	if held := e.count(`SELECT count(*)::int FROM delivery_jobs WHERE subscription_id = $1 AND state = 'pending' AND shed_reason = 'breaker_open'`, brokenSub); held == 0 {
		t.Error("no shed job says it is held by the open breaker")
	}
	breakers := d.Breakers()
	if len(breakers) != 1 || breakers[0].TenantID != "t-broken" || breakers[0].State != "open" ||
		breakers[0].Destination != "http://"+broken.Listener.Addr().String() || time.Until(breakers[0].OpenUntil) < 50*time.Minute {
		t.Errorf("Breakers() = %+v, want t-broken's destination open for about an hour", breakers)
	}

	// An auto-disabled subscription shows in the gauge.
	if _, err := e.store.Pool.Exec(context.Background(),
		`UPDATE subscriptions SET enabled = false, disabled_reason = 'auto_disabled' WHERE id = $1`, tinySub); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the auto-disabled gauge", func() bool {
		n, _ := gauge(t, reg2, "streaming_hub_subscriptions_autodisabled", nil)
		return n == 1
	})
}
