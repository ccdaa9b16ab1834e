package opevents

import (
	"testing"
	"time"

	"github.com/google/uuid"

	opstore "github.com/hubctl/hubctl/internal/store/opevents"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestRoute(t *testing.T) {
	about, other := uuid.MustParse("0190b6a2-7c1e-7d3a-9f00-000000000001"), uuid.MustParse("0190b6a2-7c1e-7d3a-9f00-000000000002")
	event := opstore.Stored{Seq: 7, Event: opstore.Event{
		TenantID: "acme", Key: SubscriptionFailing, Type: "studio.lerian." + SubscriptionFailing, About: about,
		Time: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC), Data: []byte(`{"last_status": 503}`),
	}}
	watcher := func(edit func(*opstore.Candidate)) opstore.Candidate {
		c := opstore.Candidate{ID: other, TenantID: "acme", SinkType: "webhook", Enabled: true, VerificationState: "active",
			EventTypes: []string{"hub.*"}, SchemaMajor: 1, Ordering: "none"}
		if edit != nil {
			edit(&c)
		}
		return c
	}
	for i, tc := range []struct {
		name      string
		candidate opstore.Candidate
		want      *opstore.Target
	}{
		{"another subscription of the tenant wanting hub.*", watcher(nil), &opstore.Target{SubscriptionID: other, TenantID: "acme", Seq: 7}},
		{"the subscription the event is about, though it wants hub.*", watcher(func(c *opstore.Candidate) { c.ID = about }), nil},
		{"an exact key", watcher(func(c *opstore.Candidate) { c.EventTypes = []string{SubscriptionFailing} }), &opstore.Target{SubscriptionID: other, TenantID: "acme", Seq: 7}},
		{"every event", watcher(func(c *opstore.Candidate) { c.EventTypes = []string{"*"} }), &opstore.Target{SubscriptionID: other, TenantID: "acme", Seq: 7}},
		{"other keys only", watcher(func(c *opstore.Candidate) { c.EventTypes = []string{"transaction.*"} }), nil},
		{"another tenant", watcher(func(c *opstore.Candidate) { c.TenantID = "globex" }), nil},
		{"another schema major", watcher(func(c *opstore.Candidate) { c.SchemaMajor = 2 }), nil},
		{"origin hubctl", watcher(func(c *opstore.Candidate) { c.Origin = "hubctl" }), &opstore.Target{SubscriptionID: other, TenantID: "acme", Seq: 7}},
		{"another origin", watcher(func(c *opstore.Candidate) { c.Origin = "midaz" }), nil},
		{"a filter that holds", watcher(func(c *opstore.Candidate) { c.Filter = `data.last_status == 503` }), &opstore.Target{SubscriptionID: other, TenantID: "acme", Seq: 7}},
		{"a filter that does not", watcher(func(c *opstore.Candidate) { c.Filter = `data.last_status == 500` }), nil},
		{"a filter that fails", watcher(func(c *opstore.Candidate) { c.Filter = `data.missing == 1` }), nil},
		{"pull", watcher(func(c *opstore.Candidate) { c.SinkType = "pull" }), &opstore.Target{SubscriptionID: other, TenantID: "acme", Seq: 7, Pull: true}},
		{"ordered by subject", watcher(func(c *opstore.Candidate) { c.Ordering = "subject" }), &opstore.Target{SubscriptionID: other, TenantID: "acme", Seq: 7, OrderingKey: ptr(about.String())}},
	} {
		// Filters are cached by subscription and version: each case is a
		// version of its own.
		tc.candidate.Version = time.Unix(int64(i), 0)
		t.Run(tc.name, func(t *testing.T) {
			got := Route([]opstore.Stored{event}, []opstore.Candidate{tc.candidate})
			switch {
			case tc.want == nil && len(got) != 0:
				t.Fatalf("routed to %+v, want nothing", got)
			case tc.want != nil && len(got) != 1:
				t.Fatalf("routed to %+v, want %+v", got, *tc.want)
			case tc.want != nil:
				g, w := got[0], *tc.want
				if g.SubscriptionID != w.SubscriptionID || g.TenantID != w.TenantID || g.Seq != w.Seq || g.Pull != w.Pull ||
					(g.OrderingKey == nil) != (w.OrderingKey == nil) || (g.OrderingKey != nil && *g.OrderingKey != *w.OrderingKey) {
					t.Fatalf("routed to %+v, want %+v", g, w)
				}
			}
		})
	}
}

func ptr(s string) *string { return &s }

// The chat example of docs/operational-events.md compiles and sends what
// it says: failing, recovered and disabled of another subscription, not
// updated, and nothing of the one it leaves out.
func TestTheDocumentedChatFilter(t *testing.T) {
	const expr = `type.startsWith('hub.subscription_') && type != 'hub.subscription_updated' && data.subscription_name != 'sandbox'`
	about, chat := uuid.MustParse("0190b6a2-7c1e-7d3a-9f00-000000000001"), uuid.MustParse("0190b6a2-7c1e-7d3a-9f00-000000000002")
	candidate := opstore.Candidate{ID: chat, TenantID: "acme", SinkType: "webhook", Enabled: true, VerificationState: "active",
		EventTypes: []string{"hub.*"}, SchemaMajor: 1, Filter: expr, Version: time.Unix(1000, 0)}
	for _, tc := range []struct {
		key, name string
		sent      bool
	}{
		{SubscriptionFailing, "orders", true},
		{SubscriptionRecovered, "orders", true},
		{SubscriptionDisabled, "orders", true},
		{SubscriptionUpdated, "orders", false},
		{DeliveriesDeadLettered, "orders", false},
		{SubscriptionFailing, "sandbox", false},
	} {
		e, err := Builder{TypePrefix: "studio.lerian."}.New(tc.key, Subject{ID: about, TenantID: "acme", Name: tc.name}, Hub, time.Now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(Route([]opstore.Stored{{Seq: 1, Event: e}}, []opstore.Candidate{candidate})) == 1; got != tc.sent {
			t.Errorf("%s of %s: sent %v, want %v", tc.key, tc.name, got, tc.sent)
		}
	}
}

func TestActorOf(t *testing.T) {
	for _, tc := range []struct {
		caller hubapi.Caller
		want   Actor
	}{
		{hubapi.Admin(), Actor{Kind: "admin"}},
		{hubapi.TenantKey("acme", "k1"), Actor{Kind: "api_key", ID: "k1"}},
		{hubapi.PortalSession("acme", "s1", false), Actor{Kind: "portal", Session: "s1"}},
		{hubapi.Caller{Kind: hubapi.CallerAdmin, Session: "console"}, Actor{Kind: "portal", Session: "console"}},
	} {
		if got := ActorOf(tc.caller); got != tc.want {
			t.Errorf("ActorOf(%+v) = %+v, want %+v", tc.caller, got, tc.want)
		}
	}
}
