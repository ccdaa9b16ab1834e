package subs_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/observe"
	"github.com/hubctl/hubctl/internal/store/oncall"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// TestGetShowsTheBreakerAndFailureSpanInEveryMode: a running hub holds the
// destination's breaker open (as its heartbeat reports) and the
// subscription has an open failure span; `subs get` shows both, as JSON and
// as a table, directly on the database and through the API.
func TestGetShowsTheBreakerAndFailureSpanInEveryMode(t *testing.T) {
	rcv := newReceiver(t)
	until := time.Now().Add(10 * time.Minute).UTC().Truncate(time.Second)
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			r := clitest.Run(t, m.env, "subs", "create", "--name", "hook", "--type", "webhook", "--url", rcv.url, "-o", "json")
			var sub hubapi.Subscription
			if err := json.Unmarshal([]byte(r.Stdout), &sub); r.Code != 0 || err != nil {
				t.Fatalf("create: exit %d %s", r.Code, r.Stderr)
			}
			var before hubapi.Subscription
			if err := json.Unmarshal([]byte(clitest.Run(t, m.env, "subs", "get", sub.ID, "-o", "json").Stdout), &before); err != nil {
				t.Fatal(err)
			}
			if b := before.Breaker; b == nil || *b != (hubapi.Breaker{Destination: rcv.url, State: hubapi.BreakerClosed}) {
				t.Errorf("breaker before any failure %+v, want closed on %s", before.Breaker, rcv.url)
			}

			ctx := context.Background()
			st, err := storetest.Connect(ctx, m.dsn, pg.Options{MaxConns: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			now := time.Now()
			if err := st.OnCall.Heartbeat(ctx, oncall.Instance{Owner: "hub-1", Role: "all", Version: "test", StartedAt: now, HeartbeatAt: now, Stats: []byte(`{}`)},
				[]oncall.BreakerState{{TenantID: "acme", Destination: rcv.url, State: "open", OpenUntil: until}}, observe.StaleAfter); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET failing_since = $2, last_failure_at = $3 WHERE id = $1`,
				sub.ID, now.Add(-2*time.Hour), now.Add(-time.Minute)); err != nil {
				t.Fatal(err)
			}

			got := clitest.Run(t, m.env, "subs", "get", sub.ID, "-o", "json").Stdout
			var view hubapi.Subscription
			if err := json.Unmarshal([]byte(got), &view); err != nil {
				t.Fatal(err)
			}
			if b := view.Breaker; b == nil || b.State != hubapi.BreakerOpen || b.OpenUntil == nil || !b.OpenUntil.Equal(until) || b.Instances != 1 {
				t.Errorf("breaker %+v, want open until %s on 1 instance", view.Breaker, until)
			}
			if view.FailingSince == nil || view.LastFailureAt == nil {
				t.Errorf("failure span not shown: %s", got)
			}
			table := clitest.Run(t, m.env, "subs", "get", sub.ID, "-o", "table").Stdout
			for _, want := range []string{"open until " + until.Format(time.RFC3339), "failing since ", ", last failure "} {
				if !strings.Contains(table, want) {
					t.Errorf("table lacks %q:\n%s", want, table)
				}
			}
			if strings.Contains(table, "breaker breaker") {
				t.Errorf("the breaker row says breaker twice:\n%s", table)
			}
		})
	}
}

// TestGetShowsTheWebhooksHeadersAndMaskedAuth goes through a hub: what
// the API reads back is what the table shows, the token as the API masks
// it and never in the clear.
func TestGetShowsTheWebhooksHeadersAndMaskedAuth(t *testing.T) {
	const token = "gateway-token-7f3a"
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			body := `{"name": "gated", "event_types": ["*"], "sink": {"type": "webhook", "url": "https://hooks.example/gated",
				"headers": {"X-Api-Version": "2"}, "auth": {"type": "bearer", "token": "` + token + `"}}}`
			id := idOf(t, mustRun(t, m.env, body, "subs", "create", "--from-file", "-", "-o", "json"))
			table := mustRun(t, m.env, "", "subs", "get", id, "-o", "table")
			for _, want := range []string{"X-Api-Version: 2", "bearer (token ****)"} {
				if !strings.Contains(table, want) {
					t.Errorf("table lacks %q:\n%s", want, table)
				}
			}
			if strings.Contains(table, token) {
				t.Errorf("table shows the token in the clear:\n%s", table)
			}
		})
	}
}
