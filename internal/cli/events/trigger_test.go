package events_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
)

func TestTriggerPublishesAnAcceptedSampleEvent(t *testing.T) {
	const genericTopic = "lerian.streaming.midaz_ledger.created"
	cluster := kafkatest.New(t, defaultTopic, genericTopic)
	for _, tc := range []struct {
		key, topic, wantField string
	}{
		{"transaction.posted", defaultTopic, "amount"}, // a payload of its own
		{"ledger.created", genericTopic, "metadata"},   // the generic one
	} {
		r := clitest.Run(t, nil, "events", "trigger", tc.key, "--tenant", "acme", "--brokers", strings.Join(cluster.Brokers(), ","))
		if r.Code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.key, r.Code, r.Stderr)
		}
		id := strings.TrimSuffix(r.Stdout, "\n")
		rec := cluster.Consume(t, context.Background(), tc.topic, 1)[0]
		ev, verdict, ok := event.Parse(headersOf(rec), rec.Value, event.Options{})
		if !ok {
			t.Fatalf("%s: ingest would reject the event: %s", tc.key, verdict)
		}
		if ev.ID != id || ev.TenantID != "acme" || ev.Key != tc.key {
			t.Errorf("%s: parsed %+v, printed id %q", tc.key, ev, id)
		}
		var data map[string]any
		if err := json.Unmarshal(rec.Value, &data); err != nil || data[tc.wantField] == nil {
			t.Errorf("%s: data %s lacks %q (%v)", tc.key, rec.Value, tc.wantField, err)
		}
	}
}

func TestTriggerUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"events", "trigger", "transaction.posted"},
		{"events", "trigger", "Not A Key", "--tenant", "acme"},
		{"events", "trigger", "--tenant", "acme"},
	} {
		r := clitest.Run(t, map[string]string{"STREAMING_HUB_KAFKA_BROKERS": "127.0.0.1:1"}, args...)
		if r.Code != cmdutil.ExitUsage || strings.Contains(r.Stderr, "--type") {
			t.Errorf("%v: exit %d (%s), want %d naming no --type, which trigger does not have", args, r.Code, r.Stderr, cmdutil.ExitUsage)
		}
	}
}
