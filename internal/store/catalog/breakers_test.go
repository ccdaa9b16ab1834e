package catalog_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/oncall"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

// TestStoredBreakersGoWithTheirDestination: a breaker stored by a
// heartbeat is shown (BreakerStates, what `top` and `subs get` read) only
// while some enabled, live subscription of its tenant delivers to its
// destination. Deleting the last one, disabling it or moving it to another
// destination removes the stored rows at once, and a heartbeat does not
// write them back.
func TestStoredBreakersGoWithTheirDestination(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	createSubscriptionTenant(t, st, "acme")
	createSubscriptionTenant(t, st, "globex")
	const shared, disabled, moved, renamed = "https://shared.test:443", "https://disabled.test:443", "https://moved.test:443", "https://renamed.test:443"
	subscribe := func(tenant, destination string) catalog.Subscription {
		t.Helper()
		sub := newSubscription(t, tenant, "webhook", t0)
		sub.Destination = destination
		if _, err := st.CreateSubscription(ctx, sub, 0); err != nil {
			t.Fatal(err)
		}
		return sub
	}
	first, second := subscribe("acme", shared), subscribe("acme", shared)
	toDisable, toMove, toRename := subscribe("acme", disabled), subscribe("acme", moved), subscribe("acme", renamed)
	subscribe("globex", shared)

	open := func(tenant, destination string) oncall.BreakerState {
		return oncall.BreakerState{Owner: "hub-1", TenantID: tenant, Destination: destination, State: "open", OpenUntil: t0.Add(time.Minute)}
	}
	held := []oncall.BreakerState{
		open("acme", shared), open("acme", disabled), open("acme", moved), open("acme", renamed),
		open("acme", "https://never-subscribed.test:443"), open("globex", shared),
	}
	beat := func() {
		t.Helper()
		in := oncall.Instance{Owner: "hub-1", Role: "all", Version: "test", StartedAt: t0, HeartbeatAt: t0}
		if err := st.OnCall.Heartbeat(ctx, in, held, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	shown := func() []oncall.Destination {
		t.Helper()
		states, err := st.OnCall.BreakerStates(ctx, "", "", t0, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		var out []oncall.Destination
		for _, s := range states {
			out = append(out, oncall.Destination{TenantID: s.TenantID, Destination: s.Destination})
		}
		return out
	}
	expect := func(when string, want ...oncall.Destination) {
		t.Helper()
		if got := shown(); !slices.Equal(got, want) {
			t.Errorf("%s: breakers shown = %v, want %v", when, got, want)
		}
	}
	acme := func(destination string) oncall.Destination {
		return oncall.Destination{TenantID: "acme", Destination: destination}
	}
	globexShared := oncall.Destination{TenantID: "globex", Destination: shared}

	beat()
	expect("after the first heartbeat", acme(disabled), acme(moved), acme(renamed), acme(shared), globexShared)

	if _, err := st.DeleteSubscription(ctx, "acme", first.ID, t0); err != nil {
		t.Fatal(err)
	}
	expect("another subscription still delivers to the shared destination", acme(disabled), acme(moved), acme(renamed), acme(shared), globexShared)
	if _, err := st.DeleteSubscription(ctx, "acme", second.ID, t0); err != nil {
		t.Fatal(err)
	}
	expect("the last acme subscription of the shared destination deleted", acme(disabled), acme(moved), acme(renamed), globexShared)

	update := func(sub catalog.Subscription, change func(*catalog.Subscription)) {
		t.Helper()
		if _, err := st.UpdateSubscription(ctx, "acme", sub.ID, t0.Add(time.Second), func(s *catalog.Subscription) error {
			change(s)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	update(toDisable, func(s *catalog.Subscription) { s.Enabled = false })
	update(toMove, func(s *catalog.Subscription) { s.Destination = "https://elsewhere.test:443" })
	update(toRename, func(s *catalog.Subscription) { s.Name = "renamed" })
	expect("after a disable, a move and a rename", acme(renamed), globexShared)

	beat()
	expect("a heartbeat holding every breaker still open", acme(renamed), globexShared)

	asked := []oncall.Destination{acme(shared), acme(disabled), acme(renamed), globexShared, acme("https://never-subscribed.test:443")}
	unused, err := st.OnCall.UnusedDestinations(ctx, asked)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(unused, func(a, b oncall.Destination) int {
		return strings.Compare(a.TenantID+a.Destination, b.TenantID+b.Destination)
	})
	if want := []oncall.Destination{acme(disabled), acme("https://never-subscribed.test:443"), acme(shared)}; !slices.Equal(unused, want) {
		t.Errorf("UnusedDestinations = %v, want %v", unused, want)
	}
}
