package match

import "testing"

func TestOrderingKey(t *testing.T) {
	tests := []struct {
		mode, tenant, subject string
		key                   string
		ordered               bool
	}{
		{OrderingNone, "acme", "acct-1", "", false},
		{"", "acme", "acct-1", "", false},
		{OrderingTenant, "acme", "acct-1", "acme", true},
		{OrderingSubject, "acme", "acct-1", "acct-1", true},
		{OrderingSubject, "acme", "", "", true},
	}
	for _, tt := range tests {
		key, ok := OrderingKey(tt.mode, tt.tenant, tt.subject)
		if key != tt.key || ok != tt.ordered {
			t.Errorf("OrderingKey(%q, %q, %q) = %q, %v; want %q, %v", tt.mode, tt.tenant, tt.subject, key, ok, tt.key, tt.ordered)
		}
	}
	for _, m := range []string{"none", "tenant", "subject"} {
		if !ValidOrdering(m) {
			t.Errorf("%q refused", m)
		}
	}
	if ValidOrdering("") || ValidOrdering("key") {
		t.Error("an unknown mode is accepted")
	}
}

func TestRouteNewEventsKeysTheJobsOfOrderedSubscriptions(t *testing.T) {
	sub := Subscription{TenantID: "acme", Enabled: true, VerificationState: VerificationActive, SchemaMajor: 1, EventTypes: []string{"*"}}
	candidates := map[string][]Candidate{"acme": {
		{ID: [16]byte{1}, Subscription: sub},
		{ID: [16]byte{2}, Subscription: sub, Ordering: OrderingSubject},
		{ID: [16]byte{3}, Pull: true, Subscription: sub},
	}}
	ev := NewEvent{Seq: 7, Event: Event{TenantID: "acme", Key: "a.b", SchemaMajor: 1}}
	ev.Attributes.Subject = "acct-9"
	r := RouteNewEvents([]NewEvent{ev}, candidates, FilterLimits{})
	if len(r.Jobs) != 2 || r.Jobs[0].OrderingKey != nil || r.Jobs[1].OrderingKey == nil || *r.Jobs[1].OrderingKey != "acct-9" {
		t.Fatalf("jobs = %+v, want the ordered subscription's keyed by subject and the other unkeyed", r.Jobs)
	}
	if len(r.Pull) != 1 || r.Pull[0].OrderingKey != nil {
		t.Errorf("pull routes = %+v, want one unkeyed", r.Pull)
	}
}
