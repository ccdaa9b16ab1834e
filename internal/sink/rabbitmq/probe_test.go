package rabbitmq

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/testutil/rabbittest"
)

func TestProbeRoutingKeys(t *testing.T) {
	fixed, empty := "orders.all", ""
	for _, tc := range []struct {
		name  string
		fixed *string
		types []string
		want  []string
	}{
		{"fixed key wins over event types", &fixed, []string{"a.b"}, []string{"orders.all"}},
		{"explicit empty key is probed", &empty, []string{"a.b"}, []string{""}},
		{"exact event keys, once each", nil, []string{"a.b", "c.d", "a.b"}, []string{"a.b", "c.d"}},
		{"wildcards name no key", nil, []string{"a.*", "*", "c.d"}, []string{"c.d"}},
		{"wildcards only", nil, []string{"transaction.*"}, nil},
		{"no event types", nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := probeRoutingKeys(tc.fixed, tc.types); !slices.Equal(got, tc.want) {
				t.Fatalf("probeRoutingKeys = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestProbeChecksRouting runs the probe against the real broker: a routing
// key with no queue bound fails verification (the broker returns the
// mandatory message), a bound one succeeds and the queue receives a
// transient hub.verification message.
func TestProbeChecksRouting(t *testing.T) {
	broker := rabbittest.Connect(t)
	top := broker.NewTopology(t)
	top.Bind(t, "bound.key")
	top.Bind(t, "account.created")
	typ := NewType(Options{AllowPrivate: true})
	probe := func(routingKey *string, eventTypes ...string) error {
		s := openTestSink(t, typ, top.Exchange, routingKey)
		return s.Probe(t.Context(), sink.ProbeRequest{
			SubscriptionID: uuid.NewString(), TenantID: "tenant-a", Timeout: 5 * time.Second, EventTypes: eventTypes,
		})
	}

	unbound := "nobody.listens"
	err := probe(&unbound, "account.created")
	if err == nil || !strings.Contains(err.Error(), "NO_ROUTE") || !strings.Contains(err.Error(), "nobody.listens") {
		t.Fatalf("Probe with an unroutable routing key = %v, want a NO_ROUTE failure naming the key", err)
	}
	if err := probe(nil, "account.created", "account.deleted"); err == nil || !strings.Contains(err.Error(), "account.deleted") {
		t.Fatalf("Probe by event key with one unbound key = %v, want a failure naming account.deleted", err)
	}
	// The failed probes left nothing behind except what routed.
	top.Drain(t)

	bound := "bound.key"
	if err := probe(&bound, "whatever.type"); err != nil {
		t.Fatalf("Probe with a bound routing key: %v", err)
	}
	if err := probe(nil, "account.created", "account.*"); err != nil {
		t.Fatalf("Probe by a bound event key: %v", err)
	}
	msgs := top.Drain(t)
	if len(msgs) != 2 {
		t.Fatalf("queue got %d messages, want the 2 verification messages", len(msgs))
	}
	for _, msg := range msgs {
		if msg.Type != "hub.verification" || msg.Headers[sink.AttrEventType] != "hub.verification" {
			t.Errorf("message type %q, header %v; want hub.verification", msg.Type, msg.Headers[sink.AttrEventType])
		}
		if msg.DeliveryMode == amqp.Persistent {
			t.Errorf("verification message is persistent, want transient")
		}
		var body verificationMessage
		if err := json.Unmarshal(msg.Body, &body); err != nil || body.Type != "hub.verification" || body.TenantID != "tenant-a" {
			t.Errorf("body %s (%v), want a hub.verification message of tenant-a", msg.Body, err)
		}
	}
}
