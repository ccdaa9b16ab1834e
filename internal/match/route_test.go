package match

import (
	"reflect"
	"testing"
)

func TestRouteNewEvents(t *testing.T) {
	sub := func(tenant string, types ...string) Subscription {
		return Subscription{TenantID: tenant, Enabled: true, VerificationState: VerificationActive, EventTypes: types, SchemaMajor: 1}
	}
	push := func(id byte, s Subscription) Candidate { return Candidate{ID: [16]byte{id}, Subscription: s} }
	pull := func(id byte, s Subscription) Candidate {
		return Candidate{ID: [16]byte{id}, Pull: true, Subscription: s}
	}
	ev := func(seq int64, tenant, key string) NewEvent {
		return NewEvent{Seq: seq, Event: Event{TenantID: tenant, Key: key, SchemaMajor: 1, Source: "midaz"}}
	}
	route := func(id byte, tenant string, seq int64) Route {
		return Route{SubscriptionID: [16]byte{id}, TenantID: tenant, Seq: seq}
	}
	acme := map[string][]Candidate{
		"acme": {
			push(1, sub("acme", "transaction.*")),
			pull(2, sub("acme", "*")),
			push(3, sub("acme", "balance.updated")),
		},
		"other": {push(9, sub("other", "*"))},
	}
	tests := []struct {
		name       string
		events     []NewEvent
		candidates map[string][]Candidate
		want       Routes
	}{
		{"no events", nil, acme, Routes{}},
		{"no candidates", []NewEvent{ev(1, "acme", "transaction.posted")}, nil, Routes{}},
		{"tenant without candidates", []NewEvent{ev(1, "nobody", "transaction.posted")}, acme, Routes{}},
		{
			"push and pull",
			[]NewEvent{ev(7, "acme", "transaction.posted")},
			acme,
			Routes{Jobs: []Route{route(1, "acme", 7)}, Pull: []Route{route(2, "acme", 7)}},
		},
		{
			"event order, then candidate order",
			[]NewEvent{ev(4, "acme", "balance.updated"), ev(5, "other", "x.y"), ev(6, "acme", "transaction.posted")},
			acme,
			Routes{
				Jobs: []Route{route(3, "acme", 4), route(9, "other", 5), route(1, "acme", 6)},
				Pull: []Route{route(2, "acme", 4), route(2, "acme", 6)},
			},
		},
		{
			"candidates of another tenant never match",
			[]NewEvent{ev(1, "acme", "transaction.posted")},
			map[string][]Candidate{"acme": {push(9, sub("other", "*"))}},
			Routes{},
		},
		{
			"disabled candidate",
			[]NewEvent{ev(1, "acme", "transaction.posted")},
			map[string][]Candidate{"acme": {push(1, Subscription{TenantID: "acme", EventTypes: []string{"*"}, SchemaMajor: 1})}},
			Routes{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RouteNewEvents(tt.events, tt.candidates, FilterLimits{}); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("RouteNewEvents = %+v, want %+v", got, tt.want)
			}
			// The router the store is handed decides the same.
			if got := Router(FilterLimits{})(tt.events, tt.candidates); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Router = %+v, want %+v", got, tt.want)
			}
		})
	}
}
