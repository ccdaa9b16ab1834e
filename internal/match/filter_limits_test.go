package match

import (
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/filter"
)

func TestRouteNewEventsKeepsEachFailureWithItsReason(t *testing.T) {
	sub := Subscription{TenantID: "t", Enabled: true, VerificationState: VerificationActive, EventTypes: []string{"*"}, SchemaMajor: 1}
	tests := []struct {
		name   string
		expr   string
		data   string
		limits FilterLimits
		reason string
	}{
		{"missing field", `data.missing == 1`, `{}`, FilterLimits{}, filter.ReasonEval},
		{"not JSON", `data.amount == 1`, `not json`, FilterLimits{}, filter.ReasonEval},
		{"cost limit", `size(data.s + data.s) > 0`, `{"s": "` + strings.Repeat("x", filter.RuntimeCostLimit*10) + `"}`, FilterLimits{}, filter.ReasonCostLimit},
		{"timeout", `data.items.all(i, i > 0)`, `{"items": [` + strings.TrimSuffix(strings.Repeat("1,", 1000), ",") + `]}`, FilterLimits{EvalTimeout: time.Nanosecond}, filter.ReasonTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prg, err := filter.Compile(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			candidates := map[string][]Candidate{"t": {
				{ID: [16]byte{1}, Subscription: sub, Filter: prg},
				{ID: [16]byte{2}, Subscription: sub, Filter: prg, Pull: true},
			}}
			ev := NewEvent{Seq: 7, Event: Event{TenantID: "t", Key: "a.b", SchemaMajor: 1},
				Attributes: filter.Event{Key: "a.b", TenantID: "t", Data: []byte(tt.data)}}
			r := RouteNewEvents([]NewEvent{ev}, candidates, tt.limits)
			if len(r.Jobs) != 0 || len(r.Pull) != 0 || len(r.FilterFailures) != 2 {
				t.Fatalf("routes = %+v, want two failures and nothing else", r)
			}
			for i, f := range r.FilterFailures {
				if f.Reason != tt.reason || f.Seq != 7 || f.Pull != (i == 1) || f.Error == "" {
					t.Errorf("failure %d = %+v, want reason %q", i, f, tt.reason)
				}
			}
		})
	}
}

// TestTenantBudgetStopsOnlyThatTenant: each evaluation takes 1ms on the
// fake clock; a budget of 2.5ms lets a tenant's first three evaluations run
// and fails its others with budget_exceeded, while another tenant's
// filters in the same batch run as usual; once refilled, the tenant's
// filters run again.
func TestTenantBudgetStopsOnlyThatTenant(t *testing.T) {
	pass, err := filter.Compile(`subject != "never"`)
	if err != nil {
		t.Fatal(err)
	}
	var clock time.Time
	frozen := false
	now := func() time.Time {
		if !frozen {
			clock = clock.Add(time.Millisecond) // an evaluation lasts from one reading to the next
		}
		return clock
	}
	// The budgets read the clock too; frozen while they do, so that only
	// evaluations take time.
	budgets := NewTenantBudgets(2500*time.Microsecond, func() time.Time { frozen = true; defer func() { frozen = false }(); return now() })
	limits := FilterLimits{Budgets: budgets, Now: now}
	candidates := map[string][]Candidate{}
	for _, tenant := range []string{"noisy", "quiet"} {
		sub := Subscription{TenantID: tenant, Enabled: true, VerificationState: VerificationActive, EventTypes: []string{"*"}, SchemaMajor: 1}
		candidates[tenant] = []Candidate{
			{ID: [16]byte{tenant[0], 1}, Subscription: sub, Filter: pass},
			{ID: [16]byte{tenant[0], 2}, Subscription: sub, Filter: pass},
		}
	}
	var events []NewEvent
	for seq := int64(1); seq <= 6; seq++ {
		tenant := "noisy"
		if seq == 6 {
			tenant = "quiet"
		}
		events = append(events, NewEvent{Seq: seq, Event: Event{TenantID: tenant, Key: "a.b", SchemaMajor: 1},
			Attributes: filter.Event{Key: "a.b", TenantID: tenant}})
	}
	r := RouteNewEvents(events, candidates, limits)
	// noisy: 5 events × 2 filters, 3 run; quiet: its 2 run.
	if len(r.Jobs) != 5 {
		t.Fatalf("jobs = %d, want 5 (3 of noisy, 2 of quiet)", len(r.Jobs))
	}
	if r.Jobs[3].TenantID != "quiet" || r.Jobs[4].TenantID != "quiet" {
		t.Errorf("the quiet tenant's filters did not run: %+v", r.Jobs)
	}
	if len(r.FilterFailures) != 7 {
		t.Fatalf("failures = %d, want noisy's 7 unevaluated filters", len(r.FilterFailures))
	}
	for _, f := range r.FilterFailures {
		if f.TenantID != "noisy" || f.Reason != filter.ReasonBudget {
			t.Errorf("failure %+v, want noisy's budget_exceeded", f)
		}
	}
	// A second refills the budget.
	clock = clock.Add(time.Second)
	r = RouteNewEvents(events[:1], candidates, limits)
	if len(r.Jobs) != 2 || len(r.FilterFailures) != 0 {
		t.Fatalf("after a second: %+v, want both filters run", r)
	}
}
