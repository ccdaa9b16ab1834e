package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/wait"
	"github.com/hubctl/hubctl/pkg/hubapi"
	"github.com/hubctl/hubctl/pkg/webhook"
)

const (
	roleTenant = "acme"
	roleTopic  = "lerian.streaming.midaz_transaction.posted"
	// consumerGroup is STREAMING_HUB_KAFKA_GROUP's default, which every
	// process here uses.
	consumerGroup = "streaming-hub"
	// rolePatience bounds every wait for something that must happen; a run
	// takes a few seconds, the bound is for a loaded CI machine.
	rolePatience = 30 * time.Second
)

// TestServeRolesSplitIngestFromDelivery runs the halves of the hub as
// separate processes on one database and one Kafka (docs/operating.md, Roles and scale-out): an ingest
// process stores events and creates their jobs but delivers nothing; a
// delivery process delivers those jobs but never joins the consumer group
// nor stores what is produced to Kafka.
func TestServeRolesSplitIngestFromDelivery(t *testing.T) {
	kafka := kafkatest.New(t, roleTopic)
	dsn := pgtest.DSN(t)
	brokers := strings.Join(kafka.Brokers(), ",")
	direct := clitest.With(clitest.Direct(dsn), map[string]string{"HUBCTL_TENANT": roleTenant})
	// Created before any ingest starts, so the roster it loads holds it.
	mustRun(t, direct, "", "tenants", "create", roleTenant)
	rc := newRoleReceiver(t)
	sub := createWebhook(t, direct, rc.URL)

	ingest := startRole(t, dsn, brokers, "ingest")
	waitUntil(t, "the ingest process to be ready", func() bool { return readyStatus(ingest.base) == http.StatusOK }, ingest)
	first := produce(t, brokers, `{"n":1}`)
	waitUntil(t, "the ingest process to store the first event and create its job", func() bool {
		return len(deliveries(t, direct, sub)) == 1
	}, ingest)
	// A role registers the metrics of the parts it runs, and no others.
	requireParts(t, ingest, "ingest")
	if ds := deliveries(t, direct, sub); ds[0].EventID != first || ds[0].State != hubapi.DeliveryPending || ds[0].Attempts != 0 {
		t.Errorf("under an ingest process alone the job is %+v; want event %s pending with no attempt", ds[0], first)
	}
	if got := rc.eventIDs(); len(got) != 0 {
		t.Errorf("the ingest role delivered %v; it must not dispatch", got)
	}

	delivery := startRole(t, dsn, brokers, "delivery")
	waitUntil(t, "the delivery process to be ready", func() bool { return readyStatus(delivery.base) == http.StatusOK }, ingest, delivery)
	waitUntil(t, "the delivery process to deliver the ingested event", func() bool {
		ds := deliveries(t, direct, sub)
		return len(ds) == 1 && ds[0].State == hubapi.DeliverySucceeded
	}, ingest, delivery)
	if got := rc.eventIDs(); len(got) != 1 || got[0] != first {
		t.Errorf("receiver got events %v, want only %s", got, first)
	}
	if n := groupMembers(t, kafka); n != 1 {
		t.Errorf("consumer group %s has %d members with one ingest and one delivery process running, want 1", consumerGroup, n)
	}

	if code := ingest.proc.Stop(rolePatience); code != 0 {
		t.Fatalf("ingest process exited %d after SIGTERM:\n%s", code, ingest.proc.Stderr())
	}
	// A delivery process that had joined would stay a member.
	waitUntil(t, "the consumer group to be empty with only the delivery process running", func() bool {
		return groupMembers(t, kafka) == 0
	}, delivery)
	second := produce(t, brokers, `{"n":2}`)
	requireParts(t, delivery, "dispatch")
	if n := countEvents(t, dsn); n != 1 {
		t.Errorf("%d events stored with only the delivery process running after a second was produced, want still 1", n)
	}

	// The second event was deliverable all along: another ingest process
	// stores it and the delivery process, still running, delivers it.
	again := startRole(t, dsn, brokers, "ingest")
	waitUntil(t, "the second event to be ingested and delivered", func() bool {
		return len(rc.eventIDs()) == 2
	}, again, delivery)
	if got := rc.eventIDs(); got[1] != second {
		t.Errorf("receiver got events %v, want %s then %s", got, first, second)
	}
	for _, r := range rc.tenants() {
		if r != roleTenant {
			t.Errorf("a delivery carried tenant %q, want %q", r, roleTenant)
		}
	}
}

// TestServeReadinessPerRole: /readyz needs the database on every role and,
// on the roles that run ingest, a consumer that has joined its group
// (docs/api.md). With no Kafka reachable the ingest roles stay alive but not
// ready, and the delivery role, which never talks to Kafka, is ready.
func TestServeReadinessPerRole(t *testing.T) {
	dsn := pgtest.DSN(t)
	// Nobody listens there: a closed loopback port.
	noKafka := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	for _, tt := range []struct {
		role  string
		ready bool
	}{
		{role: "all", ready: false},
		{role: "ingest", ready: false},
		{role: "delivery", ready: true},
	} {
		t.Run(tt.role, func(t *testing.T) {
			p := startRole(t, dsn, noKafka, tt.role)
			var status int
			var body map[string]any
			waitUntil(t, "the HTTP listener", func() bool {
				status, body = probe(p.base + "/readyz")
				return status != 0
			}, p)
			details, _ := body["details"].(map[string]any)
			_, ingestFailed := details["ingest"]
			_, databaseFailed := details["database"]
			switch {
			case tt.ready && (status != http.StatusOK || body["status"] != "ready"):
				t.Errorf("/readyz = %d %v, want 200 ready: delivery does not depend on Kafka", status, body)
			case !tt.ready && (status != http.StatusServiceUnavailable || body["code"] != "not_ready" || !ingestFailed || databaseFailed):
				t.Errorf("/readyz = %d %v, want 503 not_ready naming ingest alone", status, body)
			}
			if code, _ := probe(p.base + "/healthz"); code != http.StatusOK {
				t.Errorf("/healthz = %d, want 200 while the process runs", code)
			}
			if code := p.proc.Stop(rolePatience); code != 0 {
				t.Fatalf("serve --role %s exited %d after SIGTERM:\n%s", tt.role, code, p.proc.Stderr())
			}
		})
	}
}

// roleProcess is one `hubctl serve --role ROLE` and its API's base URL.
type roleProcess struct {
	proc *clitest.Process
	base string
}

// startRole starts serve in role on the database and brokers, with the
// direct mode's key (so it reads the secrets the CLI sealed) and private
// sinks allowed (the receiver is on loopback).
func startRole(t *testing.T, dsn, brokers, role string) roleProcess {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	env := clitest.With(clitest.Direct(dsn), map[string]string{
		"STREAMING_HUB_KAFKA_BROKERS":          brokers,
		"STREAMING_HUB_KAFKA_METADATA_REFRESH": "1s",
		"STREAMING_HUB_DISPATCH_IDLE_INTERVAL": "50ms",
		"STREAMING_HUB_SHUTDOWN_TIMEOUT":       "10s",
	})
	return roleProcess{proc: clitest.Start(t, env, "serve", "--role", role, "--listen", addr), base: "http://" + addr}
}

// partMetrics are a metric each part of a hub registers when it runs, one
// that is exposed from the start, before anything has been counted.
var partMetrics = map[string]string{
	"ingest":   "streaming_hub_ingest_batch_records",
	"dispatch": "streaming_hub_dispatch_due_jobs",
}

// requireParts fails the test unless p runs exactly the part named: a
// process without a part's metrics has no such part to act.
func requireParts(t *testing.T, p roleProcess, part string) {
	t.Helper()
	resp, err := http.Get(p.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for name, metric := range partMetrics {
		if has := strings.Contains(string(body), "\n# TYPE "+metric+" "); has != (name == part) {
			t.Errorf("a process running only %s exposes %s: %v", part, metric, has)
		}
	}
}

func readyStatus(base string) int {
	status, _ := probe(base + "/readyz")
	return status
}

// waitUntil polls cond until it holds, failing the test after rolePatience
// or as soon as one of the processes has exited.
func waitUntil(t *testing.T, what string, cond func() bool, running ...roleProcess) {
	t.Helper()
	wait.Poll{Patience: rolePatience, Interval: 50 * time.Millisecond, Abort: func() string {
		for _, p := range running {
			if report := p.proc.ExitReport(); report != "" {
				return report
			}
		}
		return ""
	}}.Until(t, what, cond)
}

func mustRun(t *testing.T, env map[string]string, stdin string, args ...string) string {
	t.Helper()
	r := clitest.RunWithStdin(t, env, stdin, args...)
	if r.Code != 0 {
		t.Fatalf("hubctl %s exited %d:\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// createWebhook subscribes the tenant to every event at url and requires
// the destination to have passed verification.
func createWebhook(t *testing.T, env map[string]string, url string) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"name": "roles", "sink": map[string]any{"type": "webhook", "url": url}, "event_types": []string{"*"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var sub hubapi.CreatedSubscription
	if err := json.Unmarshal([]byte(mustRun(t, env, string(body), "subs", "create", "--from-file", "-", "-o", "json")), &sub); err != nil {
		t.Fatal(err)
	}
	if sub.VerificationState != "active" || !sub.Enabled {
		t.Fatalf("subscription verification %s, enabled %v; want active and enabled", sub.VerificationState, sub.Enabled)
	}
	return sub.ID
}

func deliveries(t *testing.T, env map[string]string, sub string) []hubapi.Delivery {
	t.Helper()
	var page hubapi.Page[hubapi.Delivery]
	if err := json.Unmarshal([]byte(mustRun(t, env, "", "subs", "deliveries", sub, "-o", "json")), &page); err != nil {
		t.Fatal(err)
	}
	return page.Items
}

// produce publishes one event of the tenant with `hubctl events produce`
// and returns its id.
func produce(t *testing.T, brokers, data string) string {
	t.Helper()
	return strings.TrimSpace(mustRun(t, nil, "", "events", "produce", "--brokers", brokers,
		"--tenant", roleTenant, "--type", "transaction.posted", "--data", data))
}

func countEvents(t *testing.T, dsn string) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	// The hub's own operational events (source hubctl) aside.
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM events WHERE source <> 'hubctl'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// groupMembers is how many members the hub's consumer group has now; a
// group nobody has joined yet has none.
func groupMembers(t *testing.T, kafka *kafkatest.Cluster) int {
	t.Helper()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{consumerGroup}
	resp, err := req.RequestWith(t.Context(), kafka.Client(t))
	if err != nil {
		t.Fatalf("describe group %s: %v", consumerGroup, err)
	}
	if len(resp.Groups) != 1 {
		t.Fatalf("describe group %s: %d groups in the answer", consumerGroup, len(resp.Groups))
	}
	g := resp.Groups[0]
	if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
		if errors.Is(err, kerr.GroupIDNotFound) {
			return 0
		}
		t.Fatalf("describe group %s: %v", consumerGroup, err)
	}
	return len(g.Members)
}

// roleReceiver is a webhook destination on loopback that answers
// verification probes and records every delivery.
type roleReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []http.Header
}

func newRoleReceiver(t *testing.T) *roleReceiver {
	rc := &roleReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(webhook.HeaderEventType) != webhook.VerificationEventType {
			rc.mu.Lock()
			rc.got = append(rc.got, r.Header.Clone())
			rc.mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *roleReceiver) eventIDs() []string { return rc.headers(webhook.HeaderEventID) }

func (rc *roleReceiver) tenants() []string { return rc.headers(webhook.HeaderTenantID) }

func (rc *roleReceiver) headers(name string) []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	values := make([]string, len(rc.got))
	for i, h := range rc.got {
		values[i] = h.Get(name)
	}
	return values
}
