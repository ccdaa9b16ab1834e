package dispatch

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hubctl/hubctl/internal/breaker"
	"github.com/hubctl/hubctl/internal/store/oncall"
)

// Breakers are this process's breakers that are open or half-open, for
// operators and other processes to see.
func (d *Dispatcher) Breakers() []oncall.BreakerState {
	snap := d.breakers.Snapshot()
	out := make([]oncall.BreakerState, 0, len(snap))
	for _, s := range snap {
		dest := destinationOf(s.Key)
		state := "open"
		if s.State == breaker.HalfOpen {
			state = "half_open"
		}
		out = append(out, oncall.BreakerState{Owner: d.owner, TenantID: dest.TenantID, Destination: dest.Destination, State: state, OpenUntil: s.Until})
	}
	return out
}

// ForgetUnusedBreakers forgets the open and half-open breakers of
// destinations no enabled, live subscription delivers to any more: they
// take no more attempts, so nothing would close them, and the gauge, `top`
// and `subs get` would count them open until they went idle a day later.
// Closed breakers are left to the idle rule: they are not shown anywhere.
func (d *Dispatcher) ForgetUnusedBreakers(ctx context.Context, now time.Time) error {
	snap := d.breakers.Snapshot()
	if len(snap) == 0 {
		return nil
	}
	dests := make([]oncall.Destination, len(snap))
	for i, s := range snap {
		dests[i] = destinationOf(s.Key)
	}
	unused, err := d.oncall.UnusedDestinations(ctx, dests)
	if err != nil {
		return fmt.Errorf("looking for breakers of unused destinations: %w", err)
	}
	if len(unused) == 0 {
		return nil
	}
	drop := make(map[string]bool, len(unused))
	for _, u := range unused {
		drop[keyOf(u)] = true
	}
	d.breakers.Forget(func(key string) bool { return drop[key] }, now)
	return nil
}

// destinationOf is the tenant and destination a breaker key names
// (breakerKey).
func destinationOf(key string) oncall.Destination {
	tenant, destination, _ := strings.Cut(key, "|")
	return oncall.Destination{TenantID: tenant, Destination: destination}
}
