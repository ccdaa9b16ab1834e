package kafka

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
)

// TestBrokerGoingAwayMidBatchLosesNothing: while a batch of deliveries is
// in flight the broker drops its connections on produce requests, then
// comes back. Attempts that fail are made again as dispatch would (the
// same event, a new delivery id); in the end every event is in the topic,
// each record carrying its event's id however often it was sent.
func TestBrokerGoingAwayMidBatchLosesNothing(t *testing.T) {
	c := startSecureCluster(t)
	s := sinktest.Open(t, NewType(Options{AllowPrivate: true}), c.object())
	// Warm the client up, so the outage hits produce requests, not the
	// first connection.
	if out := s.Deliver(t.Context(), sinktest.NewDelivery()); !out.OK {
		t.Fatalf("first delivery: %s", out.Error)
	}
	var dropped atomic.Int64
	const outage = 3 // produce requests whose connection is dropped
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if dropped.Add(1) <= outage {
			c.KeepControl()
			return nil, errors.New("broker going away"), true
		}
		return nil, nil, false
	})

	const batch = 20
	events := make([]sink.Delivery, batch)
	for i := range events {
		events[i] = sinktest.NewDelivery()
		events[i].Timeout = 2 * time.Second
	}
	var wg sync.WaitGroup
	var attempts atomic.Int64
	for _, d := range events {
		wg.Go(func() {
			for try := 0; try < 10; try++ {
				d.DeliveryID = sinktest.NewDelivery().DeliveryID
				attempts.Add(1)
				if out := s.Deliver(context.Background(), d); out.OK {
					return
				}
			}
			t.Errorf("event %s was never acknowledged", d.EventID)
		})
	}
	wg.Wait()
	if dropped.Load() < outage {
		t.Fatalf("only %d produce requests reached the broker during the outage, want %d dropped", dropped.Load(), outage)
	}

	want := map[string]bool{}
	for _, d := range events {
		want[d.EventID] = true
	}
	stored := map[string]int{}
	for _, r := range c.records(t) {
		msg := kafkaMessage(t, r)
		stored[msg.Identity[sinktest.EventID]]++
	}
	for id := range want {
		if stored[id] == 0 {
			t.Errorf("event %s is not in the topic", id)
		}
	}
	t.Logf("%d events, %d attempts, %d produce requests dropped, %d records for them", batch, attempts.Load(), outage, len(stored))
}

func TestWrongPasswordIsRefusedWithoutQuotingIt(t *testing.T) {
	c := startSecureCluster(t)
	object := c.object()
	const wrong = "not-the-kafka-Pa55word-9876"
	object["sasl"] = map[string]any{"mechanism": SASLScramSHA512, "username": testUser, "password": wrong}
	s := sinktest.Open(t, NewType(Options{AllowPrivate: true}), object)
	d := sinktest.NewDelivery()
	d.Timeout = 5 * time.Second
	out := s.Deliver(t.Context(), d)
	probeErr := s.Probe(t.Context(), sink.ProbeRequest{Timeout: 5 * time.Second})
	if out.OK || probeErr == nil {
		t.Fatalf("Deliver = %+v, Probe = %v: want both refused", out, probeErr)
	}
	for what, text := range map[string]string{"Deliver error": out.Error, "Probe error": probeErr.Error()} {
		if strings.Contains(text, wrong) || strings.Contains(text, testPassword) {
			t.Errorf("%s %q quotes a password", what, text)
		}
		if !strings.Contains(text, "refused the credentials") && !strings.Contains(text, "SASL") {
			t.Errorf("%s %q does not say the credentials were refused", what, text)
		}
	}
}

func TestProbeNamesAMissingTopic(t *testing.T) {
	c := startSecureCluster(t)
	object := c.object()
	object["topic"] = "no-such-topic"
	s := sinktest.Open(t, NewType(Options{AllowPrivate: true}), object)
	err := s.Probe(t.Context(), sink.ProbeRequest{Timeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), `topic "no-such-topic" does not exist`) {
		t.Fatalf("Probe = %v, want the missing topic named", err)
	}
}

func TestSinksShareOneClient(t *testing.T) {
	c := startSecureCluster(t)
	typ := NewType(Options{AllowPrivate: true})
	a := sinktest.Open(t, typ, c.object())
	other := c.object()
	other["topic"] = "another-topic"
	b := sinktest.Open(t, typ, other)
	if a.(*topicSink).cluster != b.(*topicSink).cluster {
		t.Fatal("two topics of one cluster and login have two clients")
	}
	rotated := c.object()
	rotated["sasl"] = map[string]any{"mechanism": SASLScramSHA512, "username": testUser, "password": "rotated-password"}
	if sinktest.Open(t, typ, rotated).(*topicSink).cluster == a.(*topicSink).cluster {
		t.Fatal("a rotated password reuses the old password's client")
	}
}

// fixedResolver answers every lookup with one address.
type fixedResolver netip.Addr

func (r fixedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(r)}, nil
}

// TestAddressPolicy: a broker whose name resolves to a private address is
// refused at dial time, never dialled.
func TestAddressPolicy(t *testing.T) {
	var dialled atomic.Bool
	typ := NewType(Options{
		Resolver: fixedResolver(netip.MustParseAddr("10.0.0.9")),
		Dial: func(context.Context, string, string) (net.Conn, error) {
			dialled.Store(true)
			return nil, net.ErrClosed
		},
	})
	s := sinktest.Open(t, typ, map[string]any{"brokers": []string{"kafka.example.com:9092"}, "topic": "orders"})
	d := sinktest.NewDelivery()
	d.Timeout = 5 * time.Second
	if out := s.Deliver(t.Context(), d); out.OK || !strings.Contains(out.Error, "destination refused") {
		t.Fatalf("Deliver = %+v, want the destination refused", out)
	}
	if err := s.Probe(t.Context(), sink.ProbeRequest{Timeout: 5 * time.Second}); err == nil || !strings.Contains(err.Error(), "destination refused") {
		t.Fatalf("Probe = %v, want the destination refused", err)
	}
	if dialled.Load() {
		t.Fatal("a refused address was dialled")
	}
}
