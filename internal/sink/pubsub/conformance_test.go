package pubsub

import (
	"testing"

	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
	"github.com/hubctl/hubctl/internal/testutil/pubsubtest"
)

// pubsubIdentity maps the message attributes (docs/concepts.md, Sinks) to
// the suite's attributes.
var pubsubIdentity = map[string]sinktest.Field{
	sink.AttrEventID:       sinktest.EventID,
	sink.AttrDeliveryID:    sinktest.DeliveryID,
	sink.AttrTenantID:      sinktest.TenantID,
	sink.AttrEventType:     sinktest.EventKey,
	sink.AttrSchemaVersion: sinktest.SchemaVersion,
	"ce-source":            sinktest.Source,
	"ce-type":              sinktest.CloudEventType,
	"ce-time":              sinktest.Time,
	"ce-subject":           sinktest.Subject,
	"content-type":         sinktest.DataContentType,
	"traceparent":          sinktest.TraceParent,
	"tracestate":           sinktest.TraceState,
}

func TestConformance(t *testing.T) {
	typ := NewType(Options{AllowPrivate: true})
	key := testKey(t)
	// The fake speaks plain gRPC without authentication, as the emulator
	// does: the sinks that reach it carry no key.
	at := func(t *testing.T, endpoint, topic string) sink.Sink {
		return sinktest.Open(t, typ, map[string]any{"project": pubsubtest.Project, "topic": topic, "endpoint": endpoint})
	}
	sinktest.Run(t, sinktest.Harness{
		Type:             typ,
		Object:           map[string]any{"project": "acme-prod", "topic": "orders", "credentials_json": key},
		SameDestination:  map[string]any{"project": "acme-prod", "topic": "orders", "credentials_json": testKey(t)},
		OtherDestination: map[string]any{"project": "acme-prod", "topic": "payments", "credentials_json": key},
		Credentials:      []string{key},
		Carries: []sinktest.Field{
			sinktest.Source, sinktest.CloudEventType, sinktest.Time, sinktest.Subject,
			sinktest.DataContentType, sinktest.TraceParent, sinktest.TraceState,
		},

		Working: func(t *testing.T) (sink.Sink, sinktest.Inbox) {
			server := pubsubtest.Start(t)
			topic := server.NewTopic(t)
			return at(t, server.Endpoint(), topic), func(t testing.TB) []sinktest.Message {
				var msgs []sinktest.Message
				for _, m := range server.Messages(topic) {
					msgs = append(msgs, pubsubMessage(t, m))
				}
				return msgs
			}
		},
		Failing: func(t *testing.T) sink.Sink {
			// The server answers, and the topic does not exist.
			return at(t, pubsubtest.Start(t).Endpoint(), pubsubtest.UniqueTopic())
		},
		Hanging: func(t *testing.T) sink.Sink {
			return at(t, sinktest.NewBlackhole(t).Addr(), "orders")
		},
		Unreachable: func(t *testing.T) sink.Sink {
			return at(t, sinktest.ClosedAddr(t), "orders")
		},
	})
}

// pubsubMessage normalises a published message for the suite.
func pubsubMessage(t testing.TB, m *pstest.Message) sinktest.Message {
	t.Helper()
	identity := map[sinktest.Field]string{}
	for attr, field := range pubsubIdentity {
		if value, ok := m.Attributes[attr]; ok {
			identity[field] = value
		}
	}
	if got := m.Attributes["ce-id"]; got != identity[sinktest.EventID] {
		t.Errorf("ce-id %q differs from the event id attribute %q", got, identity[sinktest.EventID])
	}
	if got := m.Attributes["ce-specversion"]; got != "1.0" {
		t.Errorf("ce-specversion = %q, want 1.0", got)
	}
	return sinktest.Message{Body: m.Data, Identity: identity}
}
