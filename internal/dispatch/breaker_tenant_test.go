package dispatch

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store/oncall"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

// TestBreakerIsPerTenantAtOneDestination: two tenants deliver to the same
// webhook URL, and only the first tenant's requests fail. The breaker keys the
// breaker by (tenant, destination), so the failing tenant's breaker opens and
// sheds its jobs while the other tenant's jobs keep being attempted and
// delivered at the same destination.
func TestBreakerIsPerTenantAtOneDestination(t *testing.T) {
	const (
		failing, healthy = "tenant-a", "tenant-b"
		failures         = 3
		// Longer than the whole test: no probe is let through, so the
		// failing tenant's attempts stop at exactly failures, and a breaker
		// shared by both tenants would hold the healthy tenant's jobs back
		// past waitTimeout instead of merely delaying them.
		cooldown = time.Minute
	)
	e := newEnv(t)
	rc := newReceiver(t, func(r *http.Request, _ int) int {
		if r.Header.Get(whsign.HeaderTenantID) == failing {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	// Immediate retries: a failed job of the failing tenant is due again at
	// once, so only the breaker stands between it and the destination.
	zeros := slices.Repeat([]string{"0s"}, 12)
	subA, _ := e.webhookSub(failing, rc.URL, retrySchedule(zeros...))
	subB, _ := e.webhookSub(healthy, rc.URL, retrySchedule(zeros...))

	e.insertJobs(failing, subA, 10)
	e.insertJobs(healthy, subB, 10)
	d, _ := e.start(func(o *Options) {
		// One attempt at a time per destination, so no attempt of the
		// failing tenant is already in flight when its breaker opens and
		// the bound is exact.
		o.Dispatch.Workers = 1
		o.Dispatch.DestinationMaxInFlight = 1
		o.Breaker = config.BreakerConfig{Failures: failures, Cooldown: cooldown}
	})
	waitFor(t, "the failing tenant's breaker to open", func() bool { return d.breakers.OpenCount() == 1 })
	waitFor(t, "the healthy tenant's first jobs", func() bool { return e.jobStates(subB)["succeeded"] == 10 })

	// Work queued for the healthy tenant after the other tenant's breaker
	// opened still reaches the shared destination.
	e.insertJobs(healthy, subB, 10)
	waitFor(t, "the healthy tenant's later jobs", func() bool { return e.jobStates(subB)["succeeded"] == 20 })

	if n := d.breakers.OpenCount(); n != 1 {
		t.Errorf("%d breakers open, want only the failing tenant's", n)
	}
	byTenant := map[string]int{}
	for _, req := range rc.Requests() {
		byTenant[req.Header.Get(whsign.HeaderTenantID)]++
	}
	if byTenant[failing] != failures {
		t.Errorf("the failing tenant's destination got %d attempts with its breaker open and no probe due, want %d", byTenant[failing], failures)
	}
	if byTenant[healthy] != 20 {
		t.Errorf("the healthy tenant's destination got %d requests, want one for each of its 20 jobs", byTenant[healthy])
	}
	if n := e.count(`SELECT count(*)::int FROM delivery_jobs WHERE subscription_id = $1 AND attempts <> 1`, subB); n != 0 {
		t.Errorf("%d of the healthy tenant's jobs took other than one attempt", n)
	}
	// A job whose last failure was just recorded is claimed and shed
	// moments later; after that, all of them wait for the cool-down.
	waitFor(t, "every job of the failing tenant to be shed, neither delivered nor dead", func() bool {
		return e.jobStates(subA)["pending"] == 10
	})
	if n := e.count(`SELECT coalesce(sum(attempts), 0)::int FROM delivery_jobs WHERE subscription_id = $1`, subA); n != byTenant[failing] {
		t.Errorf("the failing tenant's jobs spent %d attempts, the destination saw %d: shedding must not spend attempts", n, byTenant[failing])
	}
}

// openBreakers starts a dispatcher whose breakers open at the first
// failure and stay open for the whole test, runs a job of every sub against
// a destination that always fails, and waits until all their breakers are
// open. It returns the dispatcher and its registry.
func openBreakers(t *testing.T, e *env, reap time.Duration, subs map[uuid.UUID]string) (*Dispatcher, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	e.reap = reap
	d, _ := e.start(func(o *Options) {
		o.Breaker = config.BreakerConfig{Failures: 1, Cooldown: time.Hour}
		o.Registerer = reg
	})
	destinations := map[string]bool{}
	for sub, tenant := range subs {
		e.insertJobs(tenant, sub, 1)
		var destination string
		if err := e.store.Pool.QueryRow(context.Background(), `SELECT destination FROM subscriptions WHERE id = $1`, sub).Scan(&destination); err != nil {
			t.Fatal(err)
		}
		destinations[tenant+"|"+destination] = true
	}
	waitFor(t, "every breaker to open", func() bool {
		open, _ := gauge(t, reg, "streaming_hub_breakers_open", nil)
		return int(open) == len(destinations)
	})
	return d, reg
}

func openTenants(d *Dispatcher) []string {
	var tenants []string
	for _, b := range d.Breakers() {
		tenants = append(tenants, b.TenantID)
	}
	slices.Sort(tenants)
	return tenants
}

// TestBreakersOfUnusedDestinationsAreForgotten: once no subscription of a
// tenant delivers to a destination any more, its open breaker is no longer
// counted by streaming_hub_breakers_open nor stored by the heartbeat that
// `hubctl top` reads; a breaker of a destination another subscription
// still uses stays open.
func TestBreakersOfUnusedDestinationsAreForgotten(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(*http.Request, int) int { return http.StatusServiceUnavailable })
	acmeFirst, _ := e.webhookSub("acme", rc.URL)
	acmeSecond, _ := e.webhookSub("acme", rc.URL)
	globex, _ := e.webhookSub("globex", rc.URL)
	d, reg := openBreakers(t, e, 50*time.Millisecond, map[uuid.UUID]string{acmeFirst: "acme", globex: "globex"})

	ctx := context.Background()
	// acme's first subscription goes before globex's: a maintenance round
	// that saw globex's deletion saw this one too.
	for _, del := range []struct {
		tenant string
		sub    uuid.UUID
	}{{"acme", acmeFirst}, {"globex", globex}} {
		if _, err := e.store.DeleteSubscription(ctx, del.tenant, del.sub, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "globex's breaker to be forgotten", func() bool {
		open, _ := gauge(t, reg, "streaming_hub_breakers_open", nil)
		return open == 1
	})
	if got := openTenants(d); !slices.Equal(got, []string{"acme"}) {
		t.Errorf("open breakers of %v, want acme's alone: its second subscription still delivers there", got)
	}

	in := oncall.Instance{Owner: d.Owner(), Role: "all", Version: "test", StartedAt: time.Now(), HeartbeatAt: time.Now()}
	if err := e.store.OnCall.Heartbeat(ctx, in, d.Breakers(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DeleteSubscription(ctx, "acme", acmeSecond, time.Now()); err != nil {
		t.Fatal(err)
	}
	if states, err := e.store.OnCall.BreakerStates(ctx, "", "", time.Now(), time.Minute); err != nil || len(states) != 0 {
		t.Errorf("stored breakers after the last subscription was deleted = %+v (%v), want none", states, err)
	}
	waitFor(t, "acme's breaker to be forgotten", func() bool {
		open, _ := gauge(t, reg, "streaming_hub_breakers_open", nil)
		return open == 0
	})
}

// TestPurgeForgetsTheTenantsBreakers: the purge's notification makes a
// dispatcher forget the purged tenant's breakers at once, without waiting
// for its maintenance (an hour away here), so the next heartbeat does not
// store them again; other tenants' breakers stay.
func TestPurgeForgetsTheTenantsBreakers(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(*http.Request, int) int { return http.StatusServiceUnavailable })
	acme, _ := e.webhookSub("acme", rc.URL)
	globex, _ := e.webhookSub("globex", rc.URL)
	d, reg := openBreakers(t, e, time.Hour, map[uuid.UUID]string{acme: "acme", globex: "globex"})

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if _, err := service.NewTenants(e.store.Catalog, e.store.Lifecycle, time.Now).Purge(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the purged tenant's breaker to be forgotten", func() bool {
		open, _ := gauge(t, reg, "streaming_hub_breakers_open", nil)
		return open == 1
	})
	if got := openTenants(d); !slices.Equal(got, []string{"globex"}) {
		t.Errorf("open breakers of %v after acme's purge, want globex's alone", got)
	}
}
