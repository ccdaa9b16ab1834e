package match

import (
	"testing"

	"github.com/hubctl/hubctl/internal/filter"
)

func TestRouteNewEventsAppliesFiltersAfterTheRules(t *testing.T) {
	compile := func(expr string) *filter.Program {
		p, err := filter.Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	sub := Subscription{TenantID: "t", Enabled: true, VerificationState: VerificationActive, EventTypes: []string{"*"}, SchemaMajor: 1}
	orders := sub
	orders.EventTypes = []string{"order.*"}
	_, brokenErr := filter.Compile("nope(")
	candidates := map[string][]Candidate{"t": {
		{ID: [16]byte{1}, Subscription: sub, Filter: compile(`data.amount > 100`)},
		{ID: [16]byte{2}, Subscription: sub},
		{ID: [16]byte{3}, Subscription: orders, Filter: compile(`data.missing == 1`)}, // rules say no first: never evaluated
		{ID: [16]byte{4}, Subscription: sub, FilterErr: brokenErr},
		{ID: [16]byte{5}, Subscription: sub, Filter: compile(`subject == "a"`), Pull: true},
	}}
	event := func(seq int64, subject, data string) NewEvent {
		return NewEvent{Seq: seq, Event: Event{TenantID: "t", Key: "transaction.posted", SchemaMajor: 1},
			Attributes: filter.Event{Key: "transaction.posted", TenantID: "t", Subject: subject, Data: []byte(data)}}
	}
	r := RouteNewEvents([]NewEvent{event(1, "a", `{"amount": 150}`), event(2, "b", `{"amount": 5}`)}, candidates, FilterLimits{})

	var jobs []int64
	for _, j := range r.Jobs {
		jobs = append(jobs, int64(j.SubscriptionID[0])*10+j.Seq)
	}
	// seq 1: subscriptions 1 and 2; seq 2: subscription 2.
	if want := []int64{11, 21, 22}; len(jobs) != len(want) || jobs[0] != want[0] || jobs[1] != want[1] || jobs[2] != want[2] {
		t.Fatalf("jobs (subscription*10+seq) = %v, want %v", jobs, want)
	}
	if len(r.Pull) != 1 || r.Pull[0].Seq != 1 {
		t.Fatalf("pull routes = %+v, want seq 1 only", r.Pull)
	}
	// The broken stored filter fails on both events; subscription 3's
	// filter is never evaluated.
	if len(r.FilterFailures) != 2 {
		t.Fatalf("FilterFailures = %+v, want 2", r.FilterFailures)
	}
	for i, f := range r.FilterFailures {
		if f.SubscriptionID != [16]byte{4} || f.Seq != int64(i+1) || f.Reason != filter.ReasonInvalid || f.Error == "" {
			t.Errorf("failure %d = %+v, want subscription 4's invalid filter on seq %d", i, f, i+1)
		}
	}
}
