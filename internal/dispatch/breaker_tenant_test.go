package dispatch

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/config"
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
	for _, req := range rc.got() {
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
