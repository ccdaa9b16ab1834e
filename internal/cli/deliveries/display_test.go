package deliveries

import (
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestStateSaysWhy(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios}
	held, limited, exhausted := hubapi.HeldBreakerOpen, hubapi.HeldRateLimited, hubapi.DeadExhausted
	due := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	cases := []struct {
		d          hubapi.Delivery
		want, next string
	}{
		{hubapi.Delivery{State: hubapi.DeliveryPending, NextAttemptAt: &due}, "pending", "2026-12-01T08:00:00Z"},
		{hubapi.Delivery{State: hubapi.DeliveryPending, NextAttemptAt: &due, HeldReason: &held}, "pending (held: breaker open)", "2026-12-01T08:00:00Z"},
		{hubapi.Delivery{State: hubapi.DeliveryPending, NextAttemptAt: &due, HeldReason: &limited}, "pending (held: rate limited)", "2026-12-01T08:00:00Z"},
		// Parked behind an earlier delivery of its ordering key.
		{hubapi.Delivery{State: hubapi.DeliveryPending}, "pending (held: waiting for an earlier event of its key)", "when the earlier event of its key is done"},
		{hubapi.Delivery{State: hubapi.DeliveryInFlight}, "in_flight", "-"},
		{hubapi.Delivery{State: hubapi.DeliverySucceeded}, "succeeded", "-"},
		{hubapi.Delivery{State: hubapi.DeliveryDead, DeadReason: &exhausted}, "dead (exhausted)", "-"},
	}
	for _, c := range cases {
		if got := stateText(f, c.d); got != c.want {
			t.Errorf("stateText(%+v) = %q, want %q", c.d, got, c.want)
		}
		if got := nextAttemptText(c.d); got != c.next {
			t.Errorf("nextAttemptText(%+v) = %q, want %q", c.d, got, c.next)
		}
	}
}

// After a replay the budget restarts while the history keeps every
// attempt: the summary says both, and names the job apart from the
// attempts' delivery ids.
func TestSummaryTellsTheJobAndBothAttemptCounts(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios}
	for _, tc := range []struct {
		budget, recorded int
		want             string
	}{
		{2, 5, "Attempts:      2 since the last replay (5 attempts recorded)\n"},
		{1, 1, "Attempts:      1\n"},
		{0, 0, "Attempts:      0\n"},
	} {
		var b strings.Builder
		d := hubapi.Delivery{ID: "0190b6a2-7c1e-7d3a-9f00-000000000001", State: hubapi.DeliveryPending, Attempts: tc.budget}
		if err := writeSummary(&b, f, d, tc.recorded); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) || !strings.Contains(b.String(), "Job:") || strings.Contains(b.String(), "Delivery:") {
			t.Errorf("budget %d, recorded %d:\n%s\nwant a Job line and %q", tc.budget, tc.recorded, b.String(), tc.want)
		}
	}
}
