package rabbitmq

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
	"github.com/hubctl/hubctl/internal/testutil/rabbittest"
)

// rabbitIdentity maps the message headers (docs/concepts.md, Sinks) to the suite's
// attributes; content type and timestamp are message properties.
var rabbitIdentity = map[string]sinktest.Field{
	sink.AttrEventID:       sinktest.EventID,
	sink.AttrDeliveryID:    sinktest.DeliveryID,
	sink.AttrTenantID:      sinktest.TenantID,
	sink.AttrEventType:     sinktest.EventKey,
	sink.AttrSchemaVersion: sinktest.SchemaVersion,
	"traceparent":          sinktest.TraceParent,
	"tracestate":           sinktest.TraceState,
}

func TestConformance(t *testing.T) {
	typ := NewType(Options{AllowPrivate: true})
	at := func(t *testing.T, url, exchange string) sink.Sink {
		return sinktest.Open(t, typ, map[string]any{"url": url, "exchange": exchange})
	}
	sinktest.Run(t, sinktest.Harness{
		Type:             typ,
		Object:           map[string]any{"url": "amqps://bob:" + secretPassword + "@rabbit.example.com/prod", "exchange": "orders"},
		SameDestination:  map[string]any{"url": "amqps://alice:another-password@Rabbit.Example.com:5671/prod", "exchange": "orders"},
		OtherDestination: map[string]any{"url": "amqps://bob:" + secretPassword + "@rabbit.example.com/prod", "exchange": "invoices"},
		Credentials:      []string{secretPassword},
		Carries:          []sinktest.Field{sinktest.DataContentType, sinktest.Time, sinktest.TraceParent, sinktest.TraceState},

		// The broker is connected to in the subtests that need it, so the
		// parse checks run without one.
		Working: func(t *testing.T) (sink.Sink, sinktest.Inbox) {
			top := rabbittest.Connect(t).NewTopology(t)
			// The suite's deliveries route by their event key, the
			// default routing key.
			top.Bind(t, sinktest.TestEventKey)
			return at(t, rabbittest.URL(), top.Exchange), func(t testing.TB) []sinktest.Message {
				var msgs []sinktest.Message
				for _, msg := range top.Drain(t) {
					msgs = append(msgs, amqpMessage(t, msg))
				}
				return msgs
			}
		},
		Failing: func(t *testing.T) sink.Sink {
			rabbittest.Connect(t) // skips or fails without a broker
			return at(t, rabbittest.URL(), rabbittest.UniqueName())
		},
		Hanging: func(t *testing.T) sink.Sink {
			return at(t, "amqp://guest:guest@"+sinktest.NewBlackhole(t).Addr()+"/", "orders")
		},
		Unreachable: func(t *testing.T) sink.Sink {
			return at(t, "amqp://guest:guest@"+sinktest.ClosedAddr(t)+"/", "orders")
		},
	})
}

// amqpMessage normalises a received message for the suite.
func amqpMessage(t testing.TB, msg amqp.Delivery) sinktest.Message {
	t.Helper()
	identity := map[sinktest.Field]string{}
	for header, field := range rabbitIdentity {
		value, present := msg.Headers[header]
		if !present {
			continue
		}
		text, ok := value.(string)
		if !ok {
			t.Errorf("header %s is a %T, want a string", header, value)
		}
		identity[field] = text
	}
	if msg.MessageId != identity[sinktest.EventID] {
		t.Errorf("message_id %q differs from the event id header %q", msg.MessageId, identity[sinktest.EventID])
	}
	if msg.ContentType != "" {
		identity[sinktest.DataContentType] = msg.ContentType
	}
	if !msg.Timestamp.IsZero() {
		identity[sinktest.Time] = sinktest.FormatTime(msg.Timestamp)
	}
	return sinktest.Message{Body: msg.Body, Identity: identity}
}
