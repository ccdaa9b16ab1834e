package kafka

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
	"github.com/hubctl/hubctl/internal/testutil/testpki"
)

const (
	testUser     = "hub-sink"
	testPassword = "kafka-sink-Pa55word-0123456789"
)

// kafkaIdentity maps the record headers (docs/concepts.md, Sinks) to the
// suite's attributes.
var kafkaIdentity = map[string]sinktest.Field{
	sink.AttrEventID:       sinktest.EventID,
	sink.AttrDeliveryID:    sinktest.DeliveryID,
	sink.AttrTenantID:      sinktest.TenantID,
	sink.AttrEventType:     sinktest.EventKey,
	sink.AttrSchemaVersion: sinktest.SchemaVersion,
	"ce_source":            sinktest.Source,
	"ce_type":              sinktest.CloudEventType,
	"ce_time":              sinktest.Time,
	"ce_subject":           sinktest.Subject,
	"content-type":         sinktest.DataContentType,
	"traceparent":          sinktest.TraceParent,
	"tracestate":           sinktest.TraceState,
}

// secureCluster is an in-process Kafka that requires TLS (a private CA)
// and SCRAM-SHA-512, with one topic.
type secureCluster struct {
	*kfake.Cluster
	brokers []string
	caPEM   string
	ca      *testpki.CA
	topic   string
}

func startSecureCluster(t *testing.T, opts ...kfake.Opt) *secureCluster {
	t.Helper()
	ca := testpki.MustCA(t, "hubctl kafka sink test CA")
	topic := "hubctl-test-" + uuid.NewString()
	cluster, err := kfake.NewCluster(append([]kfake.Opt{
		kfake.NumBrokers(1),
		kfake.SeedTopics(3, topic),
		kfake.EnableSASL(),
		kfake.Superuser(SASLScramSHA512, testUser, testPassword),
		kfake.TLS(ca.ServerConfig(t, []net.IP{net.IPv4(127, 0, 0, 1)})),
	}, opts...)...)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(cluster.Close)
	return &secureCluster{Cluster: cluster, brokers: cluster.ListenAddrs(), caPEM: string(ca.CertPEM), ca: ca, topic: topic}
}

// object is a sink object for this cluster's topic.
func (c *secureCluster) object() map[string]any {
	return map[string]any{
		"brokers": c.brokers, "topic": c.topic, "tls": true, "ca_cert": c.caPEM,
		"sasl": map[string]any{"mechanism": SASLScramSHA512, "username": testUser, "password": testPassword},
	}
}

// records reads back every record of the topic.
func (c *secureCluster) records(t testing.TB) []*kgo.Record {
	t.Helper()
	consumer, err := kgo.NewClient(
		kgo.SeedBrokers(c.brokers...),
		kgo.DialTLSConfig(&tls.Config{RootCAs: c.ca.Pool(), MinVersion: tls.VersionTLS12}),
		kgo.SASL(scram.Auth{User: testUser, Pass: testPassword}.AsSha512Mechanism()),
		kgo.ConsumeTopics(c.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var out []*kgo.Record
	// The records were acknowledged before this is called, so the first
	// fetches hold them all; a quiet poll after some arrived ends it.
	for wait := 5 * time.Second; ; wait = 300 * time.Millisecond {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		fetches := consumer.PollFetches(ctx)
		cancel()
		fetches.EachRecord(func(r *kgo.Record) { out = append(out, r) })
		if fetches.Empty() || ctx.Err() != nil && len(out) > 0 {
			return out
		}
		for _, e := range fetches.Errors() {
			if ctx.Err() == nil {
				t.Fatalf("consume: %v", e.Err)
			}
		}
	}
}

func TestConformance(t *testing.T) {
	typ := NewType(Options{AllowPrivate: true})
	sasl := map[string]any{"mechanism": SASLScramSHA512, "username": testUser, "password": testPassword}
	at := func(t *testing.T, addr string) sink.Sink {
		return sinktest.Open(t, typ, map[string]any{"brokers": []string{addr}, "topic": "orders", "sasl": sasl})
	}
	sinktest.Run(t, sinktest.Harness{
		Type:             typ,
		Object:           map[string]any{"brokers": []string{"kafka-1.example.com:9093", "kafka-2.example.com:9093"}, "topic": "orders", "tls": true, "sasl": sasl},
		SameDestination:  map[string]any{"brokers": []string{"KAFKA-2.example.com:9093", "kafka-1.example.com:9093"}, "topic": "orders", "tls": true, "sasl": map[string]any{"mechanism": "PLAIN", "username": "other", "password": "other-password"}},
		OtherDestination: map[string]any{"brokers": []string{"kafka-1.example.com:9093", "kafka-2.example.com:9093"}, "topic": "invoices", "tls": true, "sasl": sasl},
		Credentials:      []string{testPassword},
		Carries: []sinktest.Field{
			sinktest.Source, sinktest.CloudEventType, sinktest.Time, sinktest.Subject,
			sinktest.DataContentType, sinktest.TraceParent, sinktest.TraceState,
		},

		Working: func(t *testing.T) (sink.Sink, sinktest.Inbox) {
			c := startSecureCluster(t)
			return sinktest.Open(t, typ, c.object()), func(t testing.TB) []sinktest.Message {
				var msgs []sinktest.Message
				for _, r := range c.records(t) {
					msgs = append(msgs, kafkaMessage(t, r))
				}
				return msgs
			}
		},
		Failing: func(t *testing.T) sink.Sink {
			c := startSecureCluster(t)
			object := c.object()
			object["topic"] = "no-such-topic"
			return sinktest.Open(t, typ, object)
		},
		Hanging:     func(t *testing.T) sink.Sink { return at(t, sinktest.NewBlackhole(t).Addr()) },
		Unreachable: func(t *testing.T) sink.Sink { return at(t, sinktest.ClosedAddr(t)) },
	})
}

// kafkaMessage normalises a record for the suite.
func kafkaMessage(t testing.TB, r *kgo.Record) sinktest.Message {
	t.Helper()
	identity := map[sinktest.Field]string{}
	seen := map[string]bool{}
	for _, h := range r.Headers {
		if seen[h.Key] {
			t.Errorf("header %s appears twice", h.Key)
		}
		seen[h.Key] = true
		if field, ok := kafkaIdentity[h.Key]; ok {
			identity[field] = string(h.Value)
		}
	}
	header := func(name string) string {
		for _, h := range r.Headers {
			if h.Key == name {
				return string(h.Value)
			}
		}
		return ""
	}
	if got := header("ce_id"); got != identity[sinktest.EventID] {
		t.Errorf("ce_id %q differs from the event id header %q", got, identity[sinktest.EventID])
	}
	if got := header("ce_specversion"); got != "1.0" {
		t.Errorf("ce_specversion = %q, want 1.0", got)
	}
	if string(r.Key) != identity[sinktest.TenantID] {
		t.Errorf("record key %q, want the tenant %q (the default key)", r.Key, identity[sinktest.TenantID])
	}
	return sinktest.Message{Body: r.Value, Identity: identity}
}
