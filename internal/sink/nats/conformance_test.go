package nats

import (
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
	"github.com/hubctl/hubctl/internal/testutil/natstest"
)

// natsIdentity maps the message headers (docs/concepts.md, Sinks) to the
// suite's attributes.
var natsIdentity = map[string]sinktest.Field{
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

const (
	testToken    = "s3cr3t-nats-token-0123456789"
	testPassword = "nats-password-9876543210"
)

func TestConformance(t *testing.T) {
	typ := NewType(Options{AllowPrivate: true})
	at := func(t *testing.T, url, subject string) sink.Sink {
		return sinktest.Open(t, typ, map[string]any{"url": url, "subject": subject})
	}
	sinktest.Run(t, sinktest.Harness{
		Type:             typ,
		Object:           map[string]any{"url": "tls://nats.example.com", "subject": "orders.created", "credentials": map[string]any{"token": testToken}},
		SameDestination:  map[string]any{"url": "TLS://NATS.example.com:4222", "subject": "orders.created", "credentials": map[string]any{"username": "bob", "password": testPassword}},
		OtherDestination: map[string]any{"url": "tls://nats.example.com", "subject": "orders.paid", "credentials": map[string]any{"token": testToken}},
		Credentials:      []string{testToken},
		Carries: []sinktest.Field{
			sinktest.Source, sinktest.CloudEventType, sinktest.Time, sinktest.Subject,
			sinktest.DataContentType, sinktest.TraceParent, sinktest.TraceState,
		},

		Working: func(t *testing.T) (sink.Sink, sinktest.Inbox) {
			stream := natstest.Connect(t).NewStream(t)
			return at(t, natstest.URL(), stream.Subject), func(t testing.TB) []sinktest.Message {
				var msgs []sinktest.Message
				for _, msg := range stream.Messages(t) {
					msgs = append(msgs, natsMessage(t, msg))
				}
				return msgs
			}
		},
		Failing: func(t *testing.T) sink.Sink {
			natstest.Connect(t) // skips or fails without a server
			return at(t, natstest.URL(), natstest.UniqueSubject())
		},
		Hanging: func(t *testing.T) sink.Sink {
			return at(t, "nats://"+sinktest.NewBlackhole(t).Addr(), "orders.created")
		},
		Unreachable: func(t *testing.T) sink.Sink {
			return at(t, "nats://"+sinktest.ClosedAddr(t), "orders.created")
		},
	})
}

// natsMessage normalises a stored message for the suite.
func natsMessage(t testing.TB, msg *jetstream.RawStreamMsg) sinktest.Message {
	t.Helper()
	identity := map[sinktest.Field]string{}
	for header, field := range natsIdentity {
		if values := msg.Header.Values(header); len(values) > 0 {
			if len(values) > 1 {
				t.Errorf("header %s appears %d times", header, len(values))
			}
			identity[field] = values[0]
		}
	}
	if got := msg.Header.Get("Nats-Msg-Id"); got != identity[sinktest.EventID] {
		t.Errorf("Nats-Msg-Id %q differs from the event id header %q", got, identity[sinktest.EventID])
	}
	if got := msg.Header.Get("ce-id"); got != identity[sinktest.EventID] {
		t.Errorf("ce-id %q differs from the event id header %q", got, identity[sinktest.EventID])
	}
	if got := msg.Header.Get("ce-specversion"); got != "1.0" {
		t.Errorf("ce-specversion = %q, want 1.0", got)
	}
	return sinktest.Message{Body: msg.Data, Identity: identity}
}
