package ingest

import (
	"testing"
)

// TestMatchingThroughTheFullPath produces one transaction.posted event of
// t-a (schema 1, source midaz) and checks which subscriptions got delivery
// work: only those passing every matching rule (docs/concepts.md, Matching), as delivery jobs for
// push sinks and as pull entries for pull sinks.
func TestMatchingThroughTheFullPath(t *testing.T) {
	type subscription struct {
		tenant        string
		sink          string
		eventTypes    []string
		schemaMajor   int
		origin        *string
		enabled       bool
		verification  string
		deleted       bool
		wantJobs      int64
		wantPullEntry int64
	}
	midaz, other := "midaz", "other-service"
	active := func(s subscription) subscription {
		s.enabled, s.verification = true, "active"
		if s.tenant == "" {
			s.tenant = "t-a"
		}
		if s.sink == "" {
			s.sink = "webhook"
		}
		if s.schemaMajor == 0 {
			s.schemaMajor = 1
		}
		return s
	}
	subs := map[string]subscription{
		"exact key":             active(subscription{eventTypes: []string{"transaction.posted"}, wantJobs: 1}),
		"prefix wildcard":       active(subscription{eventTypes: []string{"transaction.*"}, wantJobs: 1}),
		"any event":             active(subscription{eventTypes: []string{"*"}, wantJobs: 1}),
		"one of several types":  active(subscription{eventTypes: []string{"balance.*", "transaction.posted"}, wantJobs: 1, sink: "sqs"}),
		"same origin":           active(subscription{eventTypes: []string{"*"}, origin: &midaz, wantJobs: 1, sink: "rabbitmq"}),
		"pull sink":             active(subscription{eventTypes: []string{"*"}, sink: "pull", wantPullEntry: 1}),
		"other event key":       active(subscription{eventTypes: []string{"transaction.reversed"}}),
		"other resource prefix": active(subscription{eventTypes: []string{"trans.*", "balance.*"}}),
		"wrong schema major":    active(subscription{eventTypes: []string{"*"}, schemaMajor: 2}),
		"wrong origin":          active(subscription{eventTypes: []string{"*"}, origin: &other}),
		"other tenant":          active(subscription{eventTypes: []string{"*"}, tenant: "t-b"}),
		"deleted":               active(subscription{eventTypes: []string{"*"}, deleted: true}),
		"disabled":              {tenant: "t-a", sink: "webhook", eventTypes: []string{"*"}, schemaMajor: 1, verification: "active"},
		"verification pending":  {tenant: "t-a", sink: "webhook", eventTypes: []string{"*"}, schemaMajor: 1, enabled: true, verification: "pending"},
		"verification failed":   {tenant: "t-a", sink: "webhook", eventTypes: []string{"*"}, schemaMajor: 1, enabled: true, verification: "failed"},
		"disabled pull":         {tenant: "t-a", sink: "pull", eventTypes: []string{"*"}, schemaMajor: 1, verification: "active"},
	}

	e := newEnv(t)
	e.addTenants("t-a", "t-b")
	ids := make(map[string]string, len(subs))
	for name, s := range subs {
		var secret *string
		if s.sink == "webhook" {
			secret = &name // any non-null ciphertext satisfies the schema
		}
		var id string
		err := e.store.Pool.QueryRow(t.Context(), `
INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, schema_major, origin,
                           enabled, verification_state, signing_secret, deleted_at)
VALUES (gen_random_uuid(), $1, $2, $3, 'somewhere', $4, $5, $6, $7, $8, $9, CASE WHEN $10 THEN now() END)
RETURNING id::text`,
			s.tenant, name, s.sink, s.eventTypes, s.schemaMajor, s.origin, s.enabled, s.verification, secret, s.deleted).Scan(&id)
		if err != nil {
			t.Fatalf("insert subscription %q: %v", name, err)
		}
		ids[name] = id
	}

	m := e.start()
	e.produce(cloudEvent(0, "t-a", eventID(1), []byte(`{"amount":1}`)))
	e.waitStored(testTopic, 1)

	for name, s := range subs {
		jobs := e.count(`SELECT count(*) FROM delivery_jobs WHERE subscription_id = $1`, ids[name])
		entries := e.count(`SELECT count(*) FROM pull_entries WHERE subscription_id = $1`, ids[name])
		if jobs != s.wantJobs || entries != s.wantPullEntry {
			t.Errorf("%s: %d delivery jobs and %d pull entries, want %d and %d", name, jobs, entries, s.wantJobs, s.wantPullEntry)
		}
	}
	if got := m.metric(t, "streaming_hub_ingest_matched_total", "sink", "push"); got != 5 {
		t.Errorf("matched_total{sink=push} = %v, want 5", got)
	}
	if got := m.metric(t, "streaming_hub_ingest_matched_total", "sink", "pull"); got != 1 {
		t.Errorf("matched_total{sink=pull} = %v, want 1", got)
	}
}
