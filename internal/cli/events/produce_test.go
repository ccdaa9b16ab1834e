package events_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
)

const defaultTopic = "lerian.streaming.midaz_transaction.posted"

func brokersEnv(c *kafkatest.Cluster) map[string]string {
	return map[string]string{"STREAMING_HUB_KAFKA_BROKERS": strings.Join(c.Brokers(), ",")}
}

func TestProduceOneEventToTheDefaultTopic(t *testing.T) {
	cluster := kafkatest.New(t, defaultTopic)
	r := clitest.Run(t, brokersEnv(cluster),
		"events", "produce", "--tenant", "acme", "--type", "transaction.posted",
		"--data", `{"amount": 100}`, "--subject", "account/42")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	id := strings.TrimSuffix(r.Stdout, "\n")

	rec := cluster.Consume(t, context.Background(), defaultTopic, 1)[0]
	wantHeaders := []string{
		"ce-specversion=1.0",
		"ce-id=" + id,
		"ce-source=midaz",
		"ce-type=studio.lerian.midaz.transaction.posted",
		"ce-time=*",
		"ce-schemaversion=1.0.0",
		"ce-resourcetype=transaction",
		"ce-eventtype=posted",
		"ce-tenantid=acme",
		"ce-subject=account/42",
		"content-type=application/json",
	}
	if len(rec.Headers) != len(wantHeaders) {
		t.Fatalf("headers %v, want %v", rec.Headers, wantHeaders)
	}
	for i, h := range rec.Headers {
		got := h.Key + "=" + string(h.Value)
		if want := wantHeaders[i]; got != want && !(strings.HasSuffix(want, "*") && strings.HasPrefix(got, strings.TrimSuffix(want, "*"))) {
			t.Errorf("header %d = %q, want %q", i, got, want)
		}
	}
	if string(rec.Key) != "acme" || string(rec.Value) != `{"amount": 100}` {
		t.Errorf("key %q value %q", rec.Key, rec.Value)
	}

	// The round trip through ingest's own parser, with the default rules.
	ev, verdict, ok := event.Parse(headersOf(rec), rec.Value, event.Options{})
	if !ok {
		t.Fatalf("ingest would reject the event: %s", verdict)
	}
	if ev.ID != id || ev.TenantID != "acme" || ev.Key != "transaction.posted" || ev.SchemaMajor != 1 {
		t.Errorf("parsed %+v", ev)
	}
}

func TestProduceDataFromStdinAndFileToAnExplicitTopic(t *testing.T) {
	const topic = "lerian.streaming.custom"
	cluster := kafkatest.New(t, topic)
	file := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(file, []byte(`{"from":"file"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"events", "produce", "--tenant", "acme", "--type", "balance.config-changed", "--topic", topic}
	if r := clitest.RunWithStdin(t, brokersEnv(cluster), `{"from":"stdin"}`, append(base, "--data", "-")...); r.Code != 0 {
		t.Fatalf("stdin: exit %d: %s", r.Code, r.Stderr)
	}
	if r := clitest.Run(t, brokersEnv(cluster), append(base, "--data", "@"+file)...); r.Code != 0 {
		t.Fatalf("file: exit %d: %s", r.Code, r.Stderr)
	}
	values := map[string]bool{}
	for _, rec := range cluster.Consume(t, context.Background(), topic, 2) {
		values[string(rec.Value)] = true
		if _, verdict, ok := event.Parse(headersOf(rec), rec.Value, event.Options{}); !ok {
			t.Errorf("ingest would reject the event: %s", verdict)
		}
	}
	if !values[`{"from":"stdin"}`] || !values[`{"from":"file"}`] {
		t.Errorf("values %v, want the stdin and the file data", values)
	}
}

func TestProduceDefaultTopicTurnsHyphensIntoUnderscores(t *testing.T) {
	const topic = "lerian.streaming.plugin_fees_fee_rule.config_changed"
	cluster := kafkatest.New(t, topic)
	r := clitest.Run(t, brokersEnv(cluster),
		"events", "produce", "--tenant", "acme", "--type", "fee-rule.config-changed", "--source", "plugin-fees")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	rec := cluster.Consume(t, context.Background(), topic, 1)[0]
	if ev, verdict, ok := event.Parse(headersOf(rec), rec.Value, event.Options{}); !ok || ev.Type != "studio.lerian.plugin-fees.fee-rule.config-changed" {
		t.Errorf("event %+v, verdict %s", ev, verdict)
	}
}

func TestProduceCountPublishesDistinctEvents(t *testing.T) {
	const n = 500
	cluster := kafkatest.New(t, defaultTopic)
	r := clitest.Run(t, brokersEnv(cluster),
		"events", "produce", "--tenant", "acme", "--type", "transaction.posted", "--count", fmt.Sprint(n))
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if r.Stdout != "" {
		t.Errorf("with --count, stdout must stay empty, got %q", r.Stdout)
	}
	if !strings.Contains(r.Stderr, fmt.Sprintf("Published %d events to %s in ", n, defaultTopic)) || !strings.Contains(r.Stderr, "events/s") {
		t.Errorf("summary on stderr = %q", r.Stderr)
	}
	ids := map[string]bool{}
	for _, rec := range cluster.Consume(t, context.Background(), defaultTopic, n) {
		ev, verdict, ok := event.Parse(headersOf(rec), rec.Value, event.Options{})
		if !ok {
			t.Fatalf("ingest would reject an event: %s", verdict)
		}
		ids[ev.ID] = true
	}
	if len(ids) != n {
		t.Errorf("%d distinct ids among %d events", len(ids), n)
	}
}

func TestProduceFailuresExitWithTheirCodes(t *testing.T) {
	cluster := kafkatest.New(t, defaultTopic)
	valid := []string{"events", "produce", "--tenant", "acme", "--type", "transaction.posted"}
	// Nothing listens on port 1: a command that got past validation would
	// fail there with 5, so a 2 proves it stopped before connecting.
	unreachable := map[string]string{"STREAMING_HUB_KAFKA_BROKERS": "127.0.0.1:1"}
	cases := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"bad type", unreachable, []string{"events", "produce", "--tenant", "acme", "--type", "posted"}, cmdutil.ExitUsage, "invalid --type"},
		{"bad tenant", unreachable, []string{"events", "produce", "--tenant", "a b", "--type", "transaction.posted"}, cmdutil.ExitUsage, "[A-Za-z0-9][A-Za-z0-9._-]{0,127}"},
		{"missing tenant", unreachable, []string{"events", "produce", "--type", "transaction.posted"}, cmdutil.ExitUsage, "tenant"},
		{"invalid JSON", unreachable, append(valid, "--data", "{nope"), cmdutil.ExitUsage, "not valid JSON"},
		{"zero count", unreachable, append(valid, "--count", "0"), cmdutil.ExitUsage, "--count"},
		{"bad brokers setting", map[string]string{"STREAMING_HUB_KAFKA_BROKERS": "no-port"}, valid, cmdutil.ExitUsage, "STREAMING_HUB_KAFKA_BROKERS"},
		{"unreachable brokers", unreachable, valid, cmdutil.ExitUnavailable, "cannot reach Kafka at 127.0.0.1:1"},
		{"--brokers overrides the setting", unreachable, append(valid, "--brokers", strings.Join(cluster.Brokers(), ",")), 0, ""},
		{"topic that does not exist", brokersEnv(cluster), append(valid, "--topic", "lerian.streaming.nowhere"), cmdutil.ExitNotFound, "lerian.streaming.nowhere"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := clitest.Run(t, c.env, c.args...)
			if r.Code != c.wantCode || !strings.Contains(r.Stderr, c.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", r.Code, r.Stderr, c.wantCode, c.wantErr)
			}
			if r.Code != 0 && r.Stdout != "" {
				t.Errorf("failed run printed %q on stdout", r.Stdout)
			}
		})
	}
}

func TestProduceWarnsAboutTopicsTheHubIgnores(t *testing.T) {
	const topic = "lerian.streaming.midaz_transaction.dlq"
	cluster := kafkatest.New(t, topic)
	r := clitest.Run(t, brokersEnv(cluster), "events", "produce", "--tenant", "acme", "--type", "transaction.dlq")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "does not consume topic "+topic) {
		t.Errorf("no warning on stderr: %q", r.Stderr)
	}
}

func headersOf(rec *kgo.Record) []event.Header {
	headers := make([]event.Header, len(rec.Headers))
	for i, h := range rec.Headers {
		headers[i] = event.Header(h)
	}
	return headers
}
