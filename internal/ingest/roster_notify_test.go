package ingest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// noRefresh keeps the periodic roster refresh out of the way, so only the
// change notifications and the database's confirmation can be what admits.
const noRefresh = time.Hour

// TestNewTenantsFirstEventsAreAdmitted: events produced right after
// `tenants create` returned are admitted, every one, however long the
// periodic refresh.
func TestNewTenantsFirstEventsAreAdmitted(t *testing.T) {
	t.Run("notified", func(t *testing.T) { testNewTenantsFirstEvents(t, true) })
	// Without the notification only the database's confirmation of a
	// discard admits them: it closes the moment between the commit and
	// the notification's arrival.
	t.Run("not notified", func(t *testing.T) { testNewTenantsFirstEvents(t, false) })
}

func testNewTenantsFirstEvents(t *testing.T, notified bool) {
	const burst = 200
	e := newEnv(t)
	ctx := context.Background()
	if !notified {
		if _, err := e.store.Pool.Exec(ctx, `DROP TRIGGER tenants_notify_roster ON tenants`); err != nil {
			t.Fatal(err)
		}
	}
	tenants := service.NewTenants(e.store.Catalog, e.store.Lifecycle, time.Now)
	if _, err := tenants.Create(ctx, "t-old"); err != nil {
		t.Fatal(err)
	}
	e.start(func(o *Options) { o.Ingest.RosterRefresh = noRefresh })
	e.produce(cloudEvent(0, "t-old", eventID(1), []byte("{}")))
	e.waitStored(testTopic, 1) // ingest is running, its roster loaded

	if _, err := tenants.Create(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	for i := range burst {
		e.produce(cloudEvent(int32(i%2), "t2", eventID(100+i), []byte("{}")))
	}
	e.waitStored(testTopic, 1+burst)
	if n := e.count(`SELECT count(*) FROM events WHERE tenant_id = 't2'`); n != burst {
		t.Errorf("inbox holds %d of the %d events produced after the tenant was created", n, burst)
	}
}

// TestRosterChangesArriveByNotification: creating, deactivating and
// deleting a tenant reach running ingest's roster within moments, with no
// event to prompt a lookup and no periodic refresh due.
func TestRosterChangesArriveByNotification(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tenants := service.NewTenants(e.store.Catalog, e.store.Lifecycle, time.Now)
	m := e.start(func(o *Options) { o.Ingest.RosterRefresh = noRefresh })
	waitWithin(t, rosterDeadline, "ingest to run", m.running.Load)

	if _, err := tenants.Create(ctx, "t-n"); err != nil {
		t.Fatal(err)
	}
	m.waitRosterStatus(t, "t-n", event.TenantActive)
	if _, err := tenants.SetStatus(ctx, "t-n", hubapi.TenantInactive); err != nil {
		t.Fatal(err)
	}
	m.waitRosterStatus(t, "t-n", event.TenantInactive)
	if _, err := e.store.Pool.Exec(ctx, `DELETE FROM tenants WHERE id = 't-n'`); err != nil {
		t.Fatal(err)
	}
	m.waitRosterStatus(t, "t-n", event.TenantUnknown)
}

func TestReadmitAsksOnlyAboutTurnedAwayTenants(t *testing.T) {
	rec := func(tenant string, v event.Verdict) queue.IngestRecord {
		return queue.IngestRecord{Event: event.Event{TenantID: tenant}, Verdict: v}
	}
	unknown, _ := event.Admit(event.TenantUnknown)
	inactive, _ := event.Admit(event.TenantInactive)
	bad := event.Verdict{Kind: event.Quarantine, Reason: event.ReasonInvalidID}
	batch := queue.IngestBatch{Records: []queue.IngestRecord{
		rec("new", unknown), rec("gone", unknown), rec("new", unknown),
		rec("back", inactive), rec("still-off", inactive), rec("ok", event.Accepted()), rec("", bad),
	}}
	ids := doubtfulTenants(batch)
	if want := []string{"new", "gone", "back", "still-off"}; !slices.Equal(ids, want) {
		t.Fatalf("doubtfulTenants = %v, want %v", ids, want)
	}
	readmit(&batch, map[string]event.TenantStatus{"new": event.TenantActive, "back": event.TenantActive, "still-off": event.TenantInactive})
	want := []event.Reason{"", event.ReasonUnknownTenant, "", "", event.ReasonInactiveTenant, "", event.ReasonInvalidID}
	for i, r := range batch.Records {
		if r.Verdict.Reason != want[i] || (want[i] == "" && r.Verdict.Kind != event.Accept) {
			t.Errorf("record %d (%s): verdict %s, want reason %q", i, r.Event.TenantID, r.Verdict, want[i])
		}
	}
}

func TestRosterUpdate(t *testing.T) {
	var r roster
	r.set(map[string]event.TenantStatus{"a": event.TenantActive, "b": event.TenantInactive})
	before := r.tenants.Load()
	r.update([]string{"a", "zz"}, map[string]event.TenantStatus{"a": event.TenantActive})
	if r.tenants.Load() != before {
		t.Error("an answer that changes nothing copied the roster")
	}
	r.update([]string{"b", "c", "a"}, map[string]event.TenantStatus{"b": event.TenantActive, "c": event.TenantInactive})
	for tenant, want := range map[string]event.TenantStatus{"a": event.TenantUnknown, "b": event.TenantActive, "c": event.TenantInactive} {
		if got := r.status(tenant); got != want {
			t.Errorf("status(%s) = %v, want %v", tenant, got, want)
		}
	}
	if (*before)["a"] != event.TenantActive || (*before)["b"] != event.TenantInactive {
		t.Error("update changed a roster readers may still hold")
	}
}
