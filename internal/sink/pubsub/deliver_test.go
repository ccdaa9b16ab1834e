package pubsub

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
	"github.com/hubctl/hubctl/internal/testutil/pubsubtest"
	"github.com/hubctl/hubctl/internal/testutil/wait"
)

func emulatorSink(t *testing.T, server *pubsubtest.Server, topic string) sink.Sink {
	return sinktest.Open(t, NewType(Options{AllowPrivate: true}), map[string]any{"project": pubsubtest.Project, "topic": topic, "endpoint": server.Endpoint()})
}

// An ordered subscription's job carries its ordering key to the message;
// an unordered one's message has none.
func TestOrderingKeyIsCarried(t *testing.T) {
	server := pubsubtest.Start(t)
	topic := server.NewTopic(t)
	s := emulatorSink(t, server, topic)
	var sent []sink.Delivery
	for _, key := range []string{"account-1", "account-2", "account-1", ""} {
		d := sinktest.NewDelivery()
		d.OrderingKey = key
		if out := s.Deliver(t.Context(), d); !out.OK {
			t.Fatalf("Deliver: %s", out.Error)
		}
		sent = append(sent, d)
	}
	msgs := server.Messages(topic)
	if len(msgs) != len(sent) {
		t.Fatalf("topic holds %d messages, want %d", len(msgs), len(sent))
	}
	for i, m := range msgs {
		if m.OrderingKey != sent[i].OrderingKey || m.Attributes[sink.AttrEventID] != sent[i].EventID {
			t.Errorf("message %d: ordering key %q, event %s; want %q, %s", i, m.OrderingKey, m.Attributes[sink.AttrEventID], sent[i].OrderingKey, sent[i].EventID)
		}
	}
}

// A failed publish with an ordering key leaves the key usable: the library
// pauses a key after an error, and dispatch's retry must be published.
func TestARetryOfAFailedOrderedPublishIsPublished(t *testing.T) {
	server := pubsubtest.Start(t)
	topic := pubsubtest.UniqueTopic()
	s := emulatorSink(t, server, topic)
	d := sinktest.NewDelivery()
	d.OrderingKey = "account-1"
	out := s.Deliver(t.Context(), d)
	if out.OK || !strings.Contains(out.Error, "does not exist") {
		t.Fatalf("Deliver to a missing topic = %+v, want a failure saying so", out)
	}
	server.CreateTopic(t, topic)
	retry := s.Deliver(t.Context(), d)
	if !retry.OK {
		t.Fatalf("the retry once the topic exists failed: %s", retry.Error)
	}
	msgs := server.Messages(topic)
	if len(msgs) != 1 || msgs[0].OrderingKey != "account-1" {
		t.Fatalf("topic holds %d messages, want the retry with its key", len(msgs))
	}
	var result publishResult
	if err := json.Unmarshal(retry.Response, &result); err != nil || result.MessageID != msgs[0].ID {
		t.Errorf("response %s does not record the message id %s (%v)", retry.Response, msgs[0].ID, err)
	}
}

// The key never reaches an error: not when the endpoint cannot use it
// (a plain-gRPC emulator given a key, reached over TLS), not when the
// library cannot read it.
func TestTheKeyNeverReachesAnError(t *testing.T) {
	server := pubsubtest.Start(t)
	topic := server.NewTopic(t)
	good := testKey(t)
	var fields map[string]string
	if err := json.Unmarshal([]byte(good), &fields); err != nil {
		t.Fatal(err)
	}
	const marker = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDmarker"
	fields["private_key"] = "-----BEGIN PRIVATE KEY-----\n" + marker + "\n-----END PRIVATE KEY-----\n"
	unreadable, _ := json.Marshal(fields)

	for name, key := range map[string]string{"a usable key": good, "an unreadable key": string(unreadable)} {
		t.Run(name, func(t *testing.T) {
			var k serviceAccountKey
			_ = json.Unmarshal([]byte(key), &k)
			secrets := []string{key, k.PrivateKey, marker, fields["private_key_id"]}
			for line := range strings.SplitSeq(k.PrivateKey, "\n") {
				if len(line) >= 16 && !strings.HasPrefix(line, "-----") {
					secrets = append(secrets, line)
				}
			}
			s := sinktest.Open(t, NewType(Options{AllowPrivate: true}), map[string]any{
				"project": pubsubtest.Project, "topic": topic, "endpoint": server.Endpoint(), "credentials_json": key})
			d := sinktest.NewDelivery()
			d.Timeout = 2 * time.Second
			out := s.Deliver(t.Context(), d)
			probe := s.Probe(t.Context(), sink.ProbeRequest{Timeout: 2 * time.Second})
			t.Logf("deliver: %s; probe: %v", out.Error, probe)
			if out.OK || probe == nil {
				t.Fatalf("Deliver = %+v, Probe = %v; want both to fail on an endpoint that cannot take the key", out, probe)
			}
			for _, text := range []string{out.Error, string(out.Response), probe.Error()} {
				for _, secret := range secrets {
					if secret != "" && strings.Contains(text, secret) {
						t.Errorf("%q quotes the key", text)
					}
				}
			}
		})
	}
	if n := len(server.Messages(topic)); n != 0 {
		t.Errorf("%d messages published", n)
	}
}

// fixedResolver answers every lookup with one address.
type fixedResolver netip.Addr

func (r fixedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(r)}, nil
}

// TestAddressPolicy: an endpoint whose name resolves to a private address
// is refused at dial time, before any connection is attempted: an
// emulator's, and Google's own, which a key reaches through the same
// dialler.
func TestAddressPolicy(t *testing.T) {
	key := testKey(t)
	for name, object := range map[string]map[string]any{
		"an emulator":       {"project": "acme-prod", "topic": "orders", "endpoint": "pubsub.example.com:8085"},
		"Google's endpoint": {"project": "acme-prod", "topic": "orders", "credentials_json": key},
	} {
		t.Run(name, func(t *testing.T) {
			dialled := make(chan string, 8)
			typ := NewType(Options{
				Resolver: fixedResolver(netip.MustParseAddr("10.0.0.7")),
				Dial: func(_ context.Context, _, address string) (net.Conn, error) {
					dialled <- address
					return nil, net.ErrClosed
				},
			})
			s := sinktest.Open(t, typ, object)
			d := sinktest.NewDelivery()
			d.Timeout = 2 * time.Second
			out := s.Deliver(t.Context(), d)
			if out.OK || !strings.Contains(out.Error, "refused") || strings.Contains(out.Error, "10.0.0.7") {
				t.Fatalf("Deliver = %+v, want the destination refused without the address it resolved to", out)
			}
			if err := s.Probe(t.Context(), sink.ProbeRequest{Timeout: 2 * time.Second}); err == nil || !strings.Contains(err.Error(), "refused") {
				t.Fatalf("Probe = %v, want the destination refused", err)
			}
			select {
			case address := <-dialled:
				t.Fatalf("a refused address was dialled: %s", address)
			default:
			}
		})
	}
}

func TestMessageRefusesWhatPubSubCannotCarry(t *testing.T) {
	long := strings.Repeat("x", 1025)
	for _, tc := range []struct {
		name   string
		change func(*sink.Delivery)
		want   string // "" when the message is built
	}{
		{"a delivery as dispatch makes it", func(*sink.Delivery) {}, ""},
		{"attribute and key at their limits", func(d *sink.Delivery) { d.Subject, d.OrderingKey = long[:1024], long[:1024] }, ""},
		{"data at the limit beside its attributes", func(d *sink.Delivery) { d.Payload = make([]byte, MaxMessageBytes-2048) }, ""},
		{"a subject over an attribute's limit", func(d *sink.Delivery) { d.Subject = long }, "attribute ce-subject is 1025 bytes"},
		{"an ordering key over its limit", func(d *sink.Delivery) { d.OrderingKey = long }, "ordering key is 1025 bytes"},
		{"an ordering key that is not UTF-8", func(d *sink.Delivery) { d.OrderingKey = "\xff" }, "not valid UTF-8"},
		{"a subject that is not UTF-8", func(d *sink.Delivery) { d.Subject = "\xff" }, "attribute ce-subject is not valid UTF-8"},
		{"data over the message limit", func(d *sink.Delivery) { d.Payload = make([]byte, MaxMessageBytes) }, "message too large for Pub/Sub"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := sinktest.NewDelivery()
			tc.change(&d)
			msg, err := Message(d)
			if tc.want == "" {
				if err != nil || msg.OrderingKey != d.OrderingKey || len(msg.Data) != len(d.Payload) {
					t.Fatalf("Message = %v, %v; want the delivery's message", msg, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Message error = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// A message Pub/Sub cannot carry is refused before anything is sent: it
// says nothing about the topic's health.
func TestAMessagePubSubCannotCarryIsNotSent(t *testing.T) {
	server := pubsubtest.Start(t)
	topic := server.NewTopic(t)
	d := sinktest.NewDelivery()
	d.OrderingKey = strings.Repeat("k", 2000)
	out := emulatorSink(t, server, topic).Deliver(t.Context(), d)
	if out.OK || !out.NotSent || !strings.Contains(out.Error, "ordering key") {
		t.Fatalf("Deliver = %+v, want a failure before sending that names the ordering key", out)
	}
	if n := len(server.Messages(topic)); n != 0 {
		t.Errorf("%d messages published", n)
	}
}

// Sinks of one endpoint and key share a client, whatever their topics; a
// rotated key gets a client of its own; the last sink of a client closes it.
func TestSinksShareAClientPerEndpointAndKey(t *testing.T) {
	server := pubsubtest.Start(t)
	typ := NewType(Options{AllowPrivate: true})
	open := func(object map[string]any) sink.Sink {
		cfg, err := typ.Parse(mustJSON(t, object))
		if err != nil {
			t.Fatal(err)
		}
		s, err := typ.Open(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	clients := typ.clients.Len
	orders := open(map[string]any{"type": Name, "project": pubsubtest.Project, "topic": server.NewTopic(t), "endpoint": server.Endpoint()})
	payments := open(map[string]any{"type": Name, "project": "other-project", "topic": server.NewTopic(t), "endpoint": server.Endpoint()})
	keyed := open(map[string]any{"type": Name, "project": pubsubtest.Project, "topic": "orders", "endpoint": server.Endpoint(), "credentials_json": testKey(t)})
	if n := clients(); n != 2 {
		t.Fatalf("%d clients for two sinks without a key and one with, want 2", n)
	}
	for _, s := range []sink.Sink{orders, payments, keyed} {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	wait.Poll{Patience: 10 * time.Second}.Until(t, "the clients of closed sinks to be released", func() bool { return clients() == 0 })
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
