package ingest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/testutil/wait"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

const (
	// rosterRefresh is STREAMING_HUB_ROSTER_REFRESH for the roster tests:
	// short, so that waiting for a refresh costs little.
	rosterRefresh = 100 * time.Millisecond
	// rosterDeadline bounds the wait for a roster change to reach ingest.
	// It is many refreshes long so a loaded machine does not fail the test;
	// a roster that is never refreshed still fails it.
	rosterDeadline = 5 * time.Second
	// topicPickupDeadline bounds the wait for a topic created after start
	// to be read, with the test configuration's 1s metadata refresh. The
	// refresh assigns the new partitions, but they join the next fetch
	// only once the one already waiting on the old partitions returns,
	// after up to franz-go's default FetchMaxWait of 5s; the rest is room
	// for a loaded machine. A consumer that never looks for new topics
	// still fails.
	topicPickupDeadline = 12 * time.Second
)

// TestRosterChangesReachRunningIngest: deactivating and reactivating a tenant
// the way `hubctl tenants deactivate|activate` does changes its verdicts
// within a roster refresh, without restarting ingest (docs/concepts.md, Tenants).
func TestRosterChangesReachRunningIngest(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tenants := service.NewTenants(e.store.Catalog, e.store.Lifecycle, time.Now)
	if _, err := tenants.Create(ctx, "t-a"); err != nil {
		t.Fatalf("create tenant: %v", err)
	}
	m := e.start(func(o *Options) { o.Ingest.RosterRefresh = rosterRefresh })

	e.produce(cloudEvent(0, "t-a", eventID(1), []byte("{}")))
	e.waitStored(testTopic, 1)
	if n := e.count(`SELECT count(*) FROM events WHERE tenant_id = 't-a'`); n != 1 {
		t.Fatalf("inbox holds %d events of the active tenant, want 1", n)
	}

	if _, err := tenants.SetStatus(ctx, "t-a", hubapi.TenantInactive); err != nil {
		t.Fatalf("deactivate tenant: %v", err)
	}
	m.waitRosterStatus(t, "t-a", event.TenantInactive)
	e.produce(cloudEvent(0, "t-a", eventID(2), []byte("{}")), cloudEvent(1, "t-a", eventID(3), []byte("{}")))
	e.waitStored(testTopic, 3)
	if n := e.count(`SELECT count(*) FROM events WHERE tenant_id = 't-a'`); n != 1 {
		t.Errorf("inbox holds %d events of the tenant after it was deactivated, want still 1", n)
	}
	if n := e.count(`SELECT count(*) FROM quarantine`); n != 0 {
		t.Errorf("%d records quarantined, want 0: an inactive tenant's events are discarded", n)
	}
	if got := m.settledMetric(t, 2, "streaming_hub_ingest_records_total", "verdict", "discard", "reason", "inactive_tenant"); got != 2 {
		t.Errorf("inactive_tenant discards = %v, want 2", got)
	}

	if _, err := tenants.SetStatus(ctx, "t-a", hubapi.TenantActive); err != nil {
		t.Fatalf("reactivate tenant: %v", err)
	}
	m.waitRosterStatus(t, "t-a", event.TenantActive)
	// eventID(2) was discarded while the tenant was inactive: nothing of
	// it was kept, so sent again it is a new event, not a duplicate.
	e.produce(cloudEvent(0, "t-a", eventID(2), []byte("{}")), cloudEvent(1, "t-a", eventID(4), []byte("{}")))
	e.waitStored(testTopic, 5)
	ids := e.eventIDs("t-a")
	if want := []string{eventID(1), eventID(2), eventID(4)}; !slices.Equal(ids, want) {
		t.Errorf("inbox holds events %v of the reactivated tenant, want %v", ids, want)
	}
	if got := m.settledMetric(t, 3, "streaming_hub_ingest_records_total", "verdict", "accept"); got != 3 {
		t.Errorf("accepted = %v, want 3", got)
	}
	if got := m.metric(t, "streaming_hub_ingest_records_total", "verdict", "discard"); got != 2 {
		t.Errorf("discards = %v, want only the 2 of the inactive spell", got)
	}
}

// TestTenantCreatedWhileIngestRuns: a tenant's events are unknown_tenant until
// it is created, and accepted from the roster refresh after that on.
func TestTenantCreatedWhileIngestRuns(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tenants := service.NewTenants(e.store.Catalog, e.store.Lifecycle, time.Now)
	m := e.start(func(o *Options) { o.Ingest.RosterRefresh = rosterRefresh })

	e.produce(cloudEvent(0, "t-new", eventID(1), []byte("{}")))
	e.waitStored(testTopic, 1)
	if got := m.settledMetric(t, 1, "streaming_hub_ingest_records_total", "verdict", "discard", "reason", "unknown_tenant"); got != 1 {
		t.Fatalf("unknown_tenant discards = %v, want 1", got)
	}
	if n := e.count(`SELECT count(*) FROM events`); n != 0 {
		t.Fatalf("inbox holds %d events of a tenant not in the roster, want 0", n)
	}

	if _, err := tenants.Create(ctx, "t-new"); err != nil {
		t.Fatalf("create tenant: %v", err)
	}
	m.waitRosterStatus(t, "t-new", event.TenantActive)
	e.produce(cloudEvent(0, "t-new", eventID(2), []byte("{}")))
	e.waitStored(testTopic, 2)
	if ids, want := e.eventIDs("t-new"), []string{eventID(2)}; !slices.Equal(ids, want) {
		t.Errorf("inbox holds events %v of the new tenant, want %v", ids, want)
	}
	if got := m.settledMetric(t, 1, "streaming_hub_ingest_records_total", "verdict", "accept"); got != 1 {
		t.Errorf("accepted = %v, want 1", got)
	}
	if got := m.metric(t, "streaming_hub_ingest_records_total", "verdict", "discard"); got != 1 {
		t.Errorf("discards = %v, want only the 1 from before the tenant existed", got)
	}
}

// TestTopicsCreatedAfterStart: a matching topic created while ingest runs is
// read after a metadata refresh; an excluded one created alongside it never
// is (docs/concepts.md, Events).
func TestTopicsCreatedAfterStart(t *testing.T) {
	const (
		newTopic      = "lerian.streaming.midaz_balance.created"
		excludedTopic = "lerian.streaming.midaz_balance.dlq"
	)
	e := newEnv(t)
	e.addTenants("t-a")
	m := e.start()
	if refresh := e.kafkaConfig().MetadataRefresh; refresh >= topicPickupDeadline/4 {
		t.Fatalf("metadata refresh %v leaves no room under the %v deadline", refresh, topicPickupDeadline)
	}
	waitFor(t, "ingest to join its group", m.Ready)

	// The excluded topic exists before the wanted one, so the refresh that
	// finds the wanted topic has seen the excluded one too.
	e.createTopic(excludedTopic)
	excludedRecord := cloudEvent(0, "t-a", eventID(1), []byte("{}"))
	excludedRecord.Topic = excludedTopic
	e.produce(excludedRecord)
	e.createTopic(newTopic)
	wanted := cloudEvent(1, "t-a", eventID(2), []byte("{}"))
	wanted.Topic = newTopic
	e.produce(wanted)

	waitWithin(t, topicPickupDeadline, "the new topic's event in the inbox", func() bool {
		return e.count(`SELECT count(*) FROM events WHERE topic = $1 AND id = $2`, newTopic, eventID(2)) == 1
	})
	subscribed := m.client.GetConsumeTopics()
	if !slices.Contains(subscribed, newTopic) || slices.Contains(subscribed, excludedTopic) {
		t.Errorf("ingest consumes %v, want %s and not %s", subscribed, newTopic, excludedTopic)
	}
	if n := e.count(`SELECT count(*) FROM kafka_offsets WHERE topic = $1`, excludedTopic); n != 0 {
		t.Errorf("offsets stored for %d partitions of the excluded topic", n)
	}
	if n := e.count(`SELECT count(*) FROM events WHERE topic = $1`, excludedTopic) +
		e.count(`SELECT count(*) FROM quarantine WHERE topic = $1`, excludedTopic); n != 0 {
		t.Errorf("%d records of the excluded topic stored", n)
	}
	if got := m.settledMetric(t, 1, "streaming_hub_ingest_records_total"); got != 1 {
		t.Errorf("%v records ingested, want only the new topic's 1", got)
	}
}

// waitRosterStatus waits for a roster refresh to give tenant the status.
func (m *member) waitRosterStatus(t testing.TB, tenant string, want event.TenantStatus) {
	t.Helper()
	names := map[event.TenantStatus]string{event.TenantUnknown: "unknown", event.TenantInactive: "inactive", event.TenantActive: "active"}
	waitWithin(t, rosterDeadline, fmt.Sprintf("the roster to show tenant %s as %s", tenant, names[want]), func() bool {
		return m.roster.status(tenant) == want
	})
}

// eventIDs lists the ids of a tenant's events in the inbox, sorted.
func (e *env) eventIDs(tenant string) []string {
	e.t.Helper()
	rows, err := e.store.Pool.Query(context.Background(), `SELECT id::text FROM events WHERE tenant_id = $1 ORDER BY id`, tenant)
	if err != nil {
		e.t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		e.t.Fatal(err)
	}
	return ids
}

// createTopic creates a topic with testPartitions partitions on the running
// cluster.
func (e *env) createTopic(topic string) {
	e.t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions = testPartitions
	rt.ReplicationFactor = 1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = int32(waitTimeout.Milliseconds())
	resp, err := req.RequestWith(context.Background(), e.producer)
	if err != nil {
		e.t.Fatalf("create topic %s: %v", topic, err)
	}
	for _, r := range resp.Topics {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			e.t.Fatalf("create topic %s: %v", r.Topic, err)
		}
	}
}

// waitWithin is waitFor with its own deadline, for waits whose bound the
// test's claim depends on.
func waitWithin(t testing.TB, deadline time.Duration, what string, cond func() bool) {
	t.Helper()
	wait.Poll{Patience: deadline}.Until(t, what, cond)
}
