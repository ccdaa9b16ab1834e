package match

import (
	"fmt"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/filter"
)

// BenchmarkRouteFiltered routes one event to 100 subscriptions of its
// tenant, each with a data filter, as ingest does: without limits, and with
// the production ones (an evaluation timeout and a tenant budget, which
// time every evaluation). The difference is what the limits cost.
func BenchmarkRouteFiltered(b *testing.B) {
	sub := Subscription{TenantID: "t", Enabled: true, VerificationState: VerificationActive, EventTypes: []string{"*"}, SchemaMajor: 1}
	var candidates []Candidate
	for i := range 100 {
		prg, err := filter.Compile(fmt.Sprintf(`data.amount > %d && has(data.transaction_id)`, 900+i*2))
		if err != nil {
			b.Fatal(err)
		}
		candidates = append(candidates, Candidate{ID: [16]byte{byte(i)}, Subscription: sub, Filter: prg})
	}
	ev := NewEvent{Seq: 1, Event: Event{TenantID: "t", Key: "a.b", SchemaMajor: 1},
		Attributes: filter.Event{Key: "a.b", TenantID: "t", Data: []byte(`{"amount": 1000, "transaction_id": "x"}`)}}
	for _, bench := range []struct {
		name   string
		limits FilterLimits
	}{
		{"limits=none", FilterLimits{}},
		{"limits=production", FilterLimits{EvalTimeout: 5 * time.Millisecond, Budgets: NewTenantBudgets(time.Hour, nil)}},
	} {
		b.Run(bench.name, func(b *testing.B) {
			byTenant := map[string][]Candidate{"t": candidates}
			for b.Loop() {
				if r := RouteNewEvents([]NewEvent{ev}, byTenant, bench.limits); len(r.Jobs) != 50 {
					b.Fatalf("jobs = %d, want 50", len(r.Jobs))
				}
			}
		})
	}
}
