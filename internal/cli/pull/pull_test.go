package pull_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/ingest"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
	"github.com/hubctl/hubctl/internal/testutil/wait"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// mode is one way of reaching the hub: its environment and its database.
type mode struct {
	name string
	env  map[string]string
	dsn  string
}

// modes sets up acme on three databases, reached directly, through the API
// with the admin token, and through the API with acme's own key.
func modes(t *testing.T) []mode {
	t.Helper()
	setup := func() string {
		dsn := pgtest.DSN(t)
		if r := clitest.Run(t, clitest.Direct(dsn), "tenants", "create", "acme"); r.Code != 0 {
			t.Fatalf("create tenant: exit %d: %s", r.Code, r.Stderr)
		}
		return dsn
	}
	directDSN, adminDSN, keyDSN := setup(), setup(), setup()
	return []mode{
		{"direct", clitest.With(clitest.Direct(directDSN), map[string]string{"HUBCTL_TENANT": "acme"}), directDSN},
		{"admin token", clitest.With(clitest.Remote(clitest.Serve(t, adminDSN), clitest.AdminToken), map[string]string{"HUBCTL_TENANT": "acme"}), adminDSN},
		{"tenant key", clitest.Remote(clitest.Serve(t, keyDSN), tenantKey(t, keyDSN)), keyDSN},
	}
}

func tenantKey(t *testing.T, dsn string) string {
	t.Helper()
	r := clitest.Run(t, clitest.Direct(dsn), "tenants", "keys", "create", "acme", "--name", "test", "-o", "json")
	var key struct{ Key string }
	if err := json.Unmarshal([]byte(r.Stdout), &key); r.Code != 0 || err != nil {
		t.Fatalf("create key: exit %d: %s", r.Code, r.Stderr)
	}
	return key.Key
}

// createPullSubscription creates a pull subscription through the CLI.
func createPullSubscription(t *testing.T, env map[string]string) string {
	t.Helper()
	r := clitest.Run(t, env, "subs", "create", "--name", "feed", "--type", "pull", "-o", "json")
	var sub struct{ ID string }
	if err := json.Unmarshal([]byte(r.Stdout), &sub); r.Code != 0 || err != nil {
		t.Fatalf("create pull subscription: exit %d: %s", r.Code, r.Stderr)
	}
	return sub.ID
}

// Fixed ids and times, so every mode's database holds the same events and
// outputs compare byte for byte.
const (
	hookID    = "0196b000-0000-7000-8000-0000000000aa"
	unknownID = "0196b000-0000-7000-8000-0000000000ff"
)

// seedEvents stores three events of acme for sub, one whose data is not
// JSON, and a webhook subscription with the fixed id hookID.
func seedEvents(t *testing.T, dsn, sub string) {
	t.Helper()
	ctx := context.Background()
	st, err := storetest.Connect(ctx, dsn, pg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = st.Pool.Exec(ctx, `
WITH ev AS (
    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time, received_at,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset, datacontenttype)
    SELECT 'acme', ('0190b6a2-7c1e-7d3a-9f00-00000000000' || g)::uuid, 'transaction.posted', '1.0.0', 1, 'midaz',
           'studio.lerian.midaz.transaction.posted', '2026-01-02T03:04:05Z', '2026-01-02T03:04:06Z', '{}', '{}',
           CASE WHEN g = 2 THEN '\xff00'::bytea ELSE convert_to('{"n":' || g || '}', 'UTF8') END, 't', 0, g,
           CASE WHEN g = 2 THEN 'application/octet-stream' ELSE 'application/json' END
    FROM generate_series(1, 3) g
    RETURNING seq)
INSERT INTO pull_entries (subscription_id, event_seq) SELECT $1, seq FROM ev`, sub)
	if err != nil {
		t.Fatalf("seed events: %v", err)
	}
	_, err = st.Pool.Exec(ctx, `
INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state, signing_secret)
VALUES ($1, 'acme', 'hook', 'webhook', 'https://hooks.test:443', '{*}', 'active', 'sealed')`, hookID)
	if err != nil {
		t.Fatalf("seed webhook subscription: %v", err)
	}
}

func TestPullBehavesTheSameInEveryMode(t *testing.T) {
	steps := []struct {
		args       []string
		wantCode   int
		wantStdout []string
		wantLines  int
		wantExact  *string
		wantStderr string
	}{
		// Seqs start at 2: creating feed wrote its operational event
		// (docs/operational-events.md) at 1.
		{args: []string{"pull", "{feed}", "-o", "jsonl"}, wantLines: 3, wantStdout: []string{
			`{"seq":2,"ceId":"0190b6a2-7c1e-7d3a-9f00-000000000001","type":"transaction.posted","ceType":"studio.lerian.midaz.transaction.posted",` +
				`"source":"midaz","tenantId":"acme","schemaVersion":"1.0.0","time":"2026-01-02T03:04:05Z","receivedAt":"2026-01-02T03:04:06Z",` +
				`"dataContentType":"application/json","payload":{"n":1}}` + "\n",
			`"payload":"/wA=","payloadEncoding":"base64"}`}},
		// Reading was the ack: nothing is left.
		{args: []string{"pull", "{feed}", "-o", "jsonl"}},
		// --after re-reads without moving the cursor, page by page.
		{args: []string{"pull", "{feed}", "--after", "0", "--limit", "3", "-o", "table"}, wantLines: 4, wantStdout: []string{
			"SEQ               TIME                  TYPE                          CE ID                                 SOURCE\n",
			"4                 2026-01-02T03:04:05Z  transaction.posted            0190b6a2-7c1e-7d3a-9f00-000000000003  midaz\n"}},
		{args: []string{"pull", "{feed}", "--after", "3", "-o", "json"}, wantStdout: []string{"{\n  \"seq\": 4,\n"}},
		// --limit N prints at most N, and --jq picks from each event.
		{args: []string{"pull", "{feed}", "--after", "0", "--limit", "2", "--jq", ".seq"}, wantExact: new("2\n3\n")},
		{args: []string{"pull", "{feed}", "--jq", ".items["}, wantCode: cmdutil.ExitUsage},
		{args: []string{"pull", "{feed}", "--jq", ".seq", "-o", "table"}, wantCode: cmdutil.ExitUsage},
		{args: []string{"pull", "{feed}"}},
		{args: []string{"pull", unknownID}, wantCode: cmdutil.ExitNotFound},
		{args: []string{"pull", "not-a-uuid"}, wantCode: cmdutil.ExitNotFound},
		{args: []string{"pull", hookID}, wantCode: cmdutil.ExitFailure},
		// A name is as good as the id: the webhook's says what it is.
		{args: []string{"pull", "hook"}, wantCode: cmdutil.ExitFailure, wantStderr: "is not a pull subscription"},
		{args: []string{"pull", "feed", "--after", "0", "--limit", "1", "--jq", ".seq"}, wantExact: new("2\n")},
		{args: []string{"pull", "nobody"}, wantCode: cmdutil.ExitNotFound, wantStderr: `subscription "nobody" not found`},
		{args: []string{"pull", "{feed}", "--limit", "0"}, wantCode: cmdutil.ExitUsage},
		{args: []string{"pull", "{feed}", "--limit", "1001"}, wantCode: cmdutil.ExitUsage},
		{args: []string{"pull", "{feed}", "--after", "-1"}, wantCode: cmdutil.ExitUsage},
		{args: []string{"pull", "{feed}", "-o", "yaml"}, wantCode: cmdutil.ExitUsage},
	}

	type outcome struct {
		code   int
		stdout string
	}
	var first []outcome
	for _, m := range modes(t) {
		feed := createPullSubscription(t, m.env)
		seedEvents(t, m.dsn, feed)
		outcomes := make([]outcome, len(steps))
		for i, s := range steps {
			args := make([]string, len(s.args))
			for j, a := range s.args {
				args[j] = strings.ReplaceAll(a, "{feed}", feed)
			}
			r := clitest.Run(t, m.env, args...)
			outcomes[i] = outcome{code: r.Code, stdout: r.Stdout}
			if r.Code != s.wantCode {
				t.Errorf("%s: %v: exit %d, want %d (stderr %q)", m.name, s.args, r.Code, s.wantCode, r.Stderr)
			}
			if s.wantCode == 0 && strings.Count(r.Stdout, "\n") < s.wantLines {
				t.Errorf("%s: %v: %d lines, want at least %d:\n%s", m.name, s.args, strings.Count(r.Stdout, "\n"), s.wantLines, r.Stdout)
			}
			if s.wantExact != nil && r.Stdout != *s.wantExact {
				t.Errorf("%s: %v: printed %q, want %q", m.name, s.args, r.Stdout, *s.wantExact)
			}
			if !strings.Contains(r.Stderr, s.wantStderr) || strings.Contains(r.Stderr, `tenant ""`) {
				t.Errorf("%s: %v: stderr %q, want it to say %q and name no empty tenant", m.name, s.args, r.Stderr, s.wantStderr)
			}
			for _, fragment := range s.wantStdout {
				if !strings.Contains(r.Stdout, fragment) {
					t.Errorf("%s: %v: output lacks %q:\n%s", m.name, s.args, fragment, r.Stdout)
				}
			}
		}
		if first == nil {
			first = outcomes
			continue
		}
		for i := range steps {
			if outcomes[i] != first[i] {
				t.Errorf("%s: %v differs from the direct mode:\n%+v\nvs\n%+v", m.name, steps[i].args, outcomes[i], first[i])
			}
		}
	}
}

const e2eTopic = "lerian.streaming.midaz_transaction.posted"

// TestFollowPrintsEveryEventOnceInSeqOrder runs the whole path: events
// produced to Kafka, stored by ingest, matched to a pull subscription and
// followed through the API with hubctl pull --follow -o jsonl.
func TestFollowPrintsEveryEventOnceInSeqOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end through Kafka")
	}
	const total = 1000
	dsn := pgtest.DSN(t)
	direct := clitest.With(clitest.Direct(dsn), map[string]string{"HUBCTL_TENANT": "acme"})
	if r := clitest.Run(t, direct, "tenants", "create", "acme"); r.Code != 0 {
		t.Fatalf("create tenant: %s", r.Stderr)
	}
	feed := createPullSubscription(t, direct)
	remote := clitest.Remote(clitest.Serve(t, dsn), tenantKey(t, dsn))

	kafka := kafkatest.New(t, e2eTopic)
	startIngest(t, kafka, dsn)
	produce := func(from, to int) {
		records := make([]*kgo.Record, 0, to-from)
		for n := from; n < to; n++ {
			records = append(records, cloudEvent(n))
		}
		kafka.Produce(t, context.Background(), e2eTopic, records...)
	}

	produce(0, total/2)
	follower := clitest.Start(t, remote, "pull", feed, "--follow", "-o", "jsonl")
	produce(total/2, total) // arrives while the follower polls

	printed := func(n int) func() bool {
		return func() bool { return strings.Count(follower.Stdout(), "\n") >= n }
	}
	poll := wait.Poll{Patience: 60 * time.Second, Interval: 50 * time.Millisecond, Abort: follower.ExitReport}
	poll.Until(t, fmt.Sprintf("%d events printed", total), printed(total))
	// A duplicate of an event already printed would come before one produced
	// after them all: the stream is in seq order.
	produce(total, total+1)
	poll.Until(t, "the event produced after the others printed", printed(total+1))
	if code := follower.Stop(10 * time.Second); code != 0 {
		t.Errorf("Ctrl-C ended pull --follow with exit %d, want 0: %s", code, follower.Stderr())
	}

	lines := strings.Split(strings.TrimSuffix(follower.Stdout(), "\n"), "\n")
	if len(lines) != total+1 {
		t.Fatalf("printed %d lines, want %d", len(lines), total+1)
	}
	seen := map[string]bool{}
	var last int64
	for i, line := range lines {
		var e struct {
			Seq     int64
			CEID    string `json:"ceId"`
			Payload struct{ N int }
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %d is not one JSON object: %v: %s", i+1, err, line)
		}
		if e.Seq <= last {
			t.Fatalf("line %d: seq %d after %d", i+1, e.Seq, last)
		}
		if seen[e.CEID] {
			t.Fatalf("line %d: event %s printed twice", i+1, e.CEID)
		}
		last, seen[e.CEID] = e.Seq, true
	}
	for n := range total + 1 {
		if !seen[eventID(n)] {
			t.Errorf("event %d was never printed", n)
		}
	}
}

func eventID(n int) string {
	return uuid.Must(uuid.Parse(fmt.Sprintf("0190b6a2-7c1e-7d3a-9f00-%012x", n))).String()
}

// cloudEvent is acme's n-th transaction.posted event, keyed by tenant as the
// platform's producers do, so acme's events keep one partition's order.
func cloudEvent(n int) *kgo.Record {
	h := func(k, v string) kgo.RecordHeader { return kgo.RecordHeader{Key: k, Value: []byte(v)} }
	return &kgo.Record{
		Key:   []byte("acme"),
		Value: fmt.Appendf(nil, `{"n":%d}`, n),
		Headers: []kgo.RecordHeader{
			h("ce-specversion", "1.0"), h("ce-id", eventID(n)), h("ce-source", "midaz"),
			h("ce-type", "studio.lerian.midaz.transaction.posted"), h("ce-time", "2026-11-29T12:00:00Z"),
			h("ce-schemaversion", "1.0.0"), h("ce-resourcetype", "transaction"), h("ce-eventtype", "posted"),
			h("ce-tenantid", "acme"), h("content-type", "application/json"),
		},
	}
}

// startIngest runs hub ingest on the cluster and database until the test
// ends.
func startIngest(t *testing.T, kafka *kafkatest.Cluster, dsn string) {
	t.Helper()
	st, err := storetest.Connect(context.Background(), dsn, pg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	consumer, err := ingest.New(ingest.Options{
		Kafka: config.KafkaConfig{
			Brokers:         kafka.Brokers(),
			Group:           "streaming-hub",
			Topics:          regexp.MustCompile(`^lerian\.streaming\..+`),
			TopicsExclude:   regexp.MustCompile(`\.(commands|dlq)$`),
			MetadataRefresh: time.Second,
		},
		Ingest:  config.IngestConfig{TypePrefix: "studio.lerian.", MaxEventBytes: 1 << 20, RosterRefresh: 100 * time.Millisecond},
		Queue:   st.Queue,
		Catalog: st.Catalog,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- consumer.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ingest: %v", err)
		}
	})
}

// TestFollowAgainstAClosedPortSaysSoAndGivesUp points --follow at a port
// nothing listens on: it must say on stderr that it is retrying and why,
// and exit 5 once --give-up-after passes without the hub answering once.
func TestFollowAgainstAClosedPortSaysSoAndGivesUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	start := time.Now()
	r := clitest.Run(t, clitest.Remote("http://"+addr, "hub_token"), "pull", unknownID, "--follow", "--give-up-after", "2s")
	if r.Code != cmdutil.ExitUnavailable {
		t.Errorf("exit %d, want 5 (stderr %q)", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "retrying in") || !strings.Contains(r.Stderr, "connection refused") {
		t.Errorf("stderr %q does not say it is retrying and why", r.Stderr)
	}
	if !strings.Contains(r.Stderr, "without reaching the hub") {
		t.Errorf("stderr %q does not say it gave up on an unreachable hub", r.Stderr)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("took %s to give up after 2s", took)
	}
}
