package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/opevents"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// reported is one operational event as the inbox holds it.
type reported struct {
	key, ceType, source, subject, schemaVersion string
	data                                        map[string]any
}

// reportedEvents reads the tenant's hub.* events in seq order.
func (f *subsFixture) reportedEvents(t *testing.T, tenant string) []reported {
	t.Helper()
	rows, err := f.st.Pool.Query(context.Background(), `
		SELECT event_key, type, source, coalesce(subject, ''), schema_version, payload
		FROM events WHERE tenant_id = $1 AND event_key LIKE 'hub.%' ORDER BY seq`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []reported
	for rows.Next() {
		var r reported
		var payload []byte
		if err := rows.Scan(&r.key, &r.ceType, &r.source, &r.subject, &r.schemaVersion, &payload); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(payload, &r.data); err != nil {
			t.Fatalf("%s data %s: %v", r.key, payload, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func keysOf(events []reported) []string {
	var keys []string
	for _, e := range events {
		keys = append(keys, e.key)
	}
	return keys
}

func TestEveryControlPlaneChangeIsReportedOnceNamingItsActor(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	key := f.svc.By(opevents.ActorOf(hubapi.TenantKey("acme", "key-7")))
	sub, _, err := key.Create(ctx, "acme", webhookInput("https://a.example/hook"))
	if err != nil {
		t.Fatal(err)
	}
	name := "renamed"
	steps := []struct {
		name string
		do   func() error
		want []string
	}{
		{"update", func() error {
			_, err := key.Update(ctx, "acme", sub.ID, hubapi.SubscriptionUpdate{Name: &name, EventTypes: []string{"hub.*"}})
			return err
		}, []string{opevents.SubscriptionUpdated}},
		{"disable", func() error { _, err := key.Disable(ctx, "acme", sub.ID); return err }, []string{opevents.SubscriptionDisabled}},
		{"disable again changes nothing", func() error { _, err := key.Disable(ctx, "acme", sub.ID); return err }, nil},
		{"enable", func() error { _, err := key.Enable(ctx, "acme", sub.ID); return err }, []string{opevents.SubscriptionEnabled}},
		{"rotate", func() error { _, err := key.RotateSecret(ctx, "acme", sub.ID, ""); return err }, []string{opevents.SecretRotated}},
		{"verify failing", func() error {
			f.webhook.setFailing("https://a.example/hook", true)
			_, err := key.Verify(ctx, "acme", sub.ID)
			if err == nil {
				return fmt.Errorf("verify of a failing destination succeeded")
			}
			return nil
		}, []string{opevents.VerificationFailed}},
		{"delete", func() error { _, err := key.Delete(ctx, "acme", sub.ID); return err }, []string{opevents.SubscriptionDeleted}},
	}
	seen := len(f.reportedEvents(t, "acme"))
	if got := keysOf(f.reportedEvents(t, "acme")); !slices.Equal(got, []string{opevents.SubscriptionCreated}) {
		t.Fatalf("after create: events %v", got)
	}
	for _, step := range steps {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		events := f.reportedEvents(t, "acme")
		if got := keysOf(events[seen:]); !slices.Equal(got, step.want) {
			t.Fatalf("%s: events %v, want %v", step.name, got, step.want)
		}
		seen = len(events)
	}
	for _, e := range f.reportedEvents(t, "acme") {
		if e.ceType != "studio.lerian."+e.key || e.source != "hubctl" || e.schemaVersion != "1.0.0" || e.subject != sub.ID {
			t.Errorf("%s: type %q source %q schema %q subject %q", e.key, e.ceType, e.source, e.schemaVersion, e.subject)
		}
		actor, _ := e.data["actor"].(map[string]any)
		if actor["kind"] != "api_key" || actor["id"] != "key-7" || e.data["subscription_id"] != sub.ID || e.data["occurred_at"] == nil {
			t.Errorf("%s: data %v", e.key, e.data)
		}
		if e.key == opevents.SubscriptionUpdated {
			if got := fmt.Sprint(e.data["changed"]); got != "[name event_types]" {
				t.Errorf("updated: changed %s", got)
			}
		}
		if e.key == opevents.SubscriptionDisabled && e.data["trigger"] != opevents.TriggerManual {
			t.Errorf("disabled: trigger %v", e.data["trigger"])
		}
	}
	if n := len(f.reportedEvents(t, "globex")); n != 0 {
		t.Errorf("globex has %d events of acme's subscription", n)
	}
}

// TestAChangeAndItsEventCommitTogether fails each write of a change in
// turn, with a trigger that raises on it: a change rolled back leaves no
// event, an event that cannot be written leaves no change, and the change
// that commits has exactly one event.
func TestAChangeAndItsEventCommitTogether(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	watcher, _ := f.create(t, "acme", hubapi.SubscriptionCreate{Name: "activity", Sink: json.RawMessage(`{"type": "pull"}`), EventTypes: []string{"hub.*"}})
	sub, _ := f.create(t, "acme", webhookInput("https://a.example/hook"))
	if _, err := f.st.Pool.Exec(ctx, `CREATE FUNCTION fail_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'failed on purpose'; END $$`); err != nil {
		t.Fatal(err)
	}
	for _, point := range []struct{ table, timing string }{
		{"subscriptions", "AFTER UPDATE"}, {"events", "AFTER INSERT"}, {"event_ids", "AFTER INSERT"}, {"pull_entries", "AFTER INSERT"},
	} {
		if _, err := f.st.Pool.Exec(ctx, fmt.Sprintf(`CREATE TRIGGER fail_write %s ON %s FOR EACH ROW EXECUTE FUNCTION fail_write()`, point.timing, point.table)); err != nil {
			t.Fatal(err)
		}
		before := len(f.reportedEvents(t, "acme"))
		if _, err := f.svc.Disable(ctx, "acme", sub.ID); err == nil {
			t.Fatalf("failing %s: the disable went through", point.table)
		}
		if got := len(f.reportedEvents(t, "acme")); got != before {
			t.Errorf("failing %s: %d events were written for a change rolled back", point.table, got-before)
		}
		if !f.raw(t, sub.ID).enabled {
			t.Errorf("failing %s: the subscription was disabled without its event", point.table)
		}
		if _, err := f.st.Pool.Exec(ctx, fmt.Sprintf(`DROP TRIGGER fail_write ON %s`, point.table)); err != nil {
			t.Fatal(err)
		}
	}
	before := f.reportedEvents(t, "acme")
	if _, err := f.svc.Disable(ctx, "acme", sub.ID); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(f.reportedEvents(t, "acme")[len(before):]); !slices.Equal(got, []string{opevents.SubscriptionDisabled}) {
		t.Fatalf("committed disable: events %v", got)
	}
	var entries int
	if err := f.st.Pool.QueryRow(ctx, `SELECT count(*) FROM pull_entries p JOIN events e ON e.seq = p.event_seq
		WHERE p.subscription_id = $1 AND e.event_key = $2`, watcher.ID, opevents.SubscriptionDisabled).Scan(&entries); err != nil {
		t.Fatal(err)
	}
	if entries != 1 {
		t.Errorf("the watching pull subscription has %d entries of the disable, want 1", entries)
	}
}

// A recover sends a subscription what it missed, but never an operational
// event about itself.
func TestRecoverLeavesOutEventsAboutTheSubscriptionItself(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	everything := webhookInput("https://a.example/hook")
	everything.EventTypes = []string{"*"}
	sub, _ := f.create(t, "acme", everything)
	f.create(t, "acme", webhookInput("https://b.example/hook")) // one event about another subscription
	if _, err := f.svc.Disable(ctx, "acme", sub.ID); err != nil {
		t.Fatal(err)
	}
	since := f.clk.now.Add(-time.Hour).Format(time.RFC3339)
	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	res, err := f.svc.Recover(ctx, "acme", sub.ID, hubapi.SubscriptionRecover{Since: since, Until: until, DryRun: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Matched != 1 {
		t.Errorf("recover matched %d events, want the one about the other subscription (of %d operational events)", res.Matched, len(f.reportedEvents(t, "acme")))
	}
}
