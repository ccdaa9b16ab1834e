package rabbitmq

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
	"github.com/hubctl/hubctl/internal/testutil/rabbittest"
	"github.com/hubctl/hubctl/internal/testutil/wait"
)

// dialRecorder dials for real and keeps the connections, so a test can cut
// them as a network failure or broker crash would.
type dialRecorder struct {
	mu    sync.Mutex
	conns []net.Conn
	dials atomic.Int64
}

func (r *dialRecorder) dial(ctx context.Context, network, address string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, address)
	if err == nil {
		r.dials.Add(1)
		r.mu.Lock()
		r.conns = append(r.conns, conn)
		r.mu.Unlock()
	}
	return conn, err
}

// cut closes every connection dialled so far, under the client's feet.
func (r *dialRecorder) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

// openTestSink parses and opens a sink on the test broker.
func openTestSink(t *testing.T, typ *Type, exchange string, routingKey *string) *rabbitSink {
	t.Helper()
	obj := map[string]any{"url": rabbittest.URL(), "exchange": exchange}
	if routingKey != nil {
		obj["routing_key"] = *routingKey
	}
	return sinktest.Open(t, typ, obj).(*rabbitSink)
}

func testDelivery(eventKey string) sink.Delivery {
	return sink.Delivery{
		DeliveryID:      uuid.NewString(),
		EventID:         uuid.NewString(),
		EventKey:        eventKey,
		TenantID:        "tenant-a",
		Time:            time.Unix(1767225600, 0),
		SchemaVersion:   "3",
		DataContentType: "application/vnd.lerian+json",
		TraceParent:     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		Payload:         []byte(`{"amount":"10.00","note":"ünïcode"}`),
		Timeout:         5 * time.Second,
	}
}

func TestDeliverPublishesConfirmedMessage(t *testing.T) {
	broker := rabbittest.Connect(t)
	top := broker.NewTopology(t)
	top.Bind(t, "transaction.posted")
	typ := NewType(Options{AllowPrivate: true})
	s := openTestSink(t, typ, top.Exchange, nil)

	d := testDelivery("transaction.posted")
	if out := s.Deliver(t.Context(), d); !out.OK {
		t.Fatalf("Deliver = %+v, want OK", out)
	}
	got := top.Drain(t)
	if len(got) != 1 {
		t.Fatalf("queue holds %d messages, want 1", len(got))
	}
	msg := got[0]
	if string(msg.Body) != string(d.Payload) {
		t.Errorf("body = %q, want %q", msg.Body, d.Payload)
	}
	checks := []struct{ what, got, want string }{
		{"message_id", msg.MessageId, d.EventID},
		{"content_type", msg.ContentType, d.DataContentType},
		{"routing key", msg.RoutingKey, d.EventKey},
		{"type", msg.Type, d.EventKey},
		{sink.AttrEventID, fmt.Sprint(msg.Headers[sink.AttrEventID]), d.EventID},
		{sink.AttrEventType, fmt.Sprint(msg.Headers[sink.AttrEventType]), d.EventKey},
		{sink.AttrTenantID, fmt.Sprint(msg.Headers[sink.AttrTenantID]), d.TenantID},
		{sink.AttrDeliveryID, fmt.Sprint(msg.Headers[sink.AttrDeliveryID]), d.DeliveryID},
		{sink.AttrSchemaVersion, fmt.Sprint(msg.Headers[sink.AttrSchemaVersion]), d.SchemaVersion},
		{"traceparent", fmt.Sprint(msg.Headers["traceparent"]), d.TraceParent},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if _, present := msg.Headers["tracestate"]; present {
		t.Errorf("tracestate header present though the event has none")
	}
	if msg.DeliveryMode != amqp.Persistent {
		t.Errorf("delivery mode = %d, want persistent (%d)", msg.DeliveryMode, amqp.Persistent)
	}
	if !msg.Timestamp.Equal(d.Time) {
		t.Errorf("timestamp = %v, want %v", msg.Timestamp, d.Time)
	}
}

func TestDeliverOutcomes(t *testing.T) {
	broker := rabbittest.Connect(t)
	custom := "custom.key"
	tests := []struct {
		name       string
		routingKey *string // the sink's routing_key
		bindKey    string  // "" binds nothing
		exchange   string  // "" means the test's exchange
		wantError  string  // "" means OK
	}{
		{name: "routing key defaults to the event key", bindKey: "account.created"},
		{name: "configured routing key", routingKey: &custom, bindKey: custom},
		{name: "unroutable message is a failure", bindKey: "",
			wantError: "unroutable: exchange"},
		{name: "event key not bound is a failure", routingKey: nil, bindKey: "other.key",
			wantError: "NO_ROUTE"},
		{name: "missing exchange is a failure", exchange: rabbittest.UniqueName(),
			wantError: "the broker closed the channel: NOT_FOUND"},
	}
	typ := NewType(Options{AllowPrivate: true})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top := broker.NewTopology(t)
			if tc.bindKey != "" {
				top.Bind(t, tc.bindKey)
			}
			exchange := top.Exchange
			if tc.exchange != "" {
				exchange = tc.exchange
			}
			s := openTestSink(t, typ, exchange, tc.routingKey)
			out := s.Deliver(t.Context(), testDelivery("account.created"))
			if tc.wantError == "" {
				if !out.OK {
					t.Fatalf("Deliver = %+v, want OK", out)
				}
				if n := len(top.Drain(t)); n != 1 {
					t.Fatalf("queue holds %d messages, want 1", n)
				}
				return
			}
			if out.OK || !strings.Contains(out.Error, tc.wantError) {
				t.Fatalf("Deliver = %+v, want a failure mentioning %q", out, tc.wantError)
			}
			if strings.Contains(out.Error, "guest:guest") {
				t.Fatalf("Deliver error %q holds credentials", out.Error)
			}
		})
	}

	// The failures above closed or dirtied channels of the shared
	// connection; a sink on it must still deliver.
	top := broker.NewTopology(t)
	top.Bind(t, "account.created")
	s := openTestSink(t, typ, top.Exchange, nil)
	for i := range 3 {
		if out := s.Deliver(t.Context(), testDelivery("account.created")); !out.OK {
			t.Fatalf("Deliver %d after failures = %+v, want OK", i, out)
		}
	}
}

func TestProbe(t *testing.T) {
	broker := rabbittest.Connect(t)
	top := broker.NewTopology(t)
	typ := NewType(Options{AllowPrivate: true})
	probe := sink.ProbeRequest{SubscriptionID: uuid.NewString(), TenantID: "tenant-a", Timeout: 5 * time.Second}

	if err := openTestSink(t, typ, top.Exchange, nil).Probe(t.Context(), probe); err != nil {
		t.Fatalf("Probe of an existing exchange: %v", err)
	}

	missing := openTestSink(t, typ, rabbittest.UniqueName(), nil)
	err := missing.Probe(t.Context(), probe)
	if err == nil || !strings.Contains(err.Error(), "NOT_FOUND") {
		t.Fatalf("Probe of a missing exchange = %v, want a NOT_FOUND failure", err)
	}

	// A wrong password is refused, and the refusal does not repeat it.
	u, parseErr := amqp.ParseURI(rabbittest.URL())
	if parseErr != nil {
		t.Fatal(parseErr)
	}
	raw, _ := json.Marshal(map[string]string{"type": Name, "exchange": top.Exchange,
		"url": fmt.Sprintf("amqp://%s:%s@%s:%d/", u.Username, secretPassword, u.Host, u.Port)})
	cfg, parseErr := typ.Parse(raw)
	if parseErr != nil {
		t.Fatal(parseErr)
	}
	wrong, openErr := typ.Open(cfg, nil)
	if openErr != nil {
		t.Fatal(openErr)
	}
	defer wrong.Close()
	err = wrong.Probe(t.Context(), probe)
	if err == nil || !strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), secretPassword) {
		t.Fatalf("Probe with a wrong password = %v, want a refusal without the password", err)
	}
}

// TestReconnectAfterConnectionLoss cuts the shared connection in the middle
// of a stream of concurrent deliveries. Dispatch retries failed attempts;
// the test does the same, and every event must reach the queue.
func TestReconnectAfterConnectionLoss(t *testing.T) {
	broker := rabbittest.Connect(t)
	top := broker.NewTopology(t)
	top.Bind(t, "ledger.entry")
	rec := &dialRecorder{}
	typ := NewType(Options{AllowPrivate: true, Dial: rec.dial})
	s := openTestSink(t, typ, top.Exchange, nil)

	const events, workers, maxTries = 200, 8, 5
	ids := make(chan string, events)
	for range events {
		ids <- uuid.NewString()
	}
	close(ids)
	var sent, failures atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for id := range ids {
				d := testDelivery("ledger.entry")
				d.EventID = id
				for try := 1; ; try++ {
					out := s.Deliver(t.Context(), d)
					if out.OK {
						break
					}
					failures.Add(1)
					if try == maxTries {
						t.Errorf("event %s failed %d times, last: %s", id, try, out.Error)
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
				if sent.Add(1) == events/2 {
					rec.cut()
				}
			}
		})
	}
	wg.Wait()

	received := map[string]int{}
	for _, msg := range top.Drain(t) {
		received[msg.MessageId]++
	}
	if len(received) != events {
		t.Fatalf("queue holds %d distinct events, want %d", len(received), events)
	}
	if n := rec.dials.Load(); n < 2 {
		t.Fatalf("connections dialled = %d, want a reconnect", n)
	}
	t.Logf("%d failed attempts retried; %d connections", failures.Load(), rec.dials.Load())

	// Once the loss is noticed, the very next attempt reconnects and
	// succeeds.
	rec.cut()
	wait.Poll{Patience: 5 * time.Second}.Until(t, "the dropped connection to be forgotten", func() bool {
		conn, _ := s.broker.liveConnection()
		return conn == nil
	})
	if out := s.Deliver(t.Context(), testDelivery("ledger.entry")); !out.OK {
		t.Fatalf("first Deliver after a noticed loss = %+v, want OK", out)
	}
}

func TestConnectionSharedAcrossSinks(t *testing.T) {
	broker := rabbittest.Connect(t)
	top := broker.NewTopology(t)
	top.Bind(t, "a.b")
	rec := &dialRecorder{}
	typ := NewType(Options{AllowPrivate: true, Dial: rec.dial})
	first := openTestSink(t, typ, top.Exchange, nil)
	second := openTestSink(t, typ, top.Exchange, nil)
	var wg sync.WaitGroup
	for i := range 20 {
		s := first
		if i%2 == 1 {
			s = second
		}
		wg.Go(func() {
			if out := s.Deliver(t.Context(), testDelivery("a.b")); !out.OK {
				t.Errorf("Deliver = %+v", out)
			}
		})
	}
	wg.Wait()
	if n := rec.dials.Load(); n != 1 {
		t.Fatalf("connections dialled = %d, want 1 shared", n)
	}
	if n := len(top.Drain(t)); n != 20 {
		t.Fatalf("queue holds %d messages, want 20", n)
	}
}

// TestAddressGuard: without AllowPrivate, a hostname resolving to loopback
// is refused at dial time.
func TestAddressGuard(t *testing.T) {
	var dialled atomic.Int64
	typ := NewType(Options{
		Resolver: staticResolver{"rabbit.internal.example": netip.MustParseAddr("127.0.0.1")},
		Dial: func(context.Context, string, string) (net.Conn, error) {
			dialled.Add(1)
			return nil, fmt.Errorf("test dial: must not be reached")
		},
	})
	cfg, err := typ.Parse(json.RawMessage(`{"type":"rabbitmq","url":"amqp://guest:guest@rabbit.internal.example/","exchange":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := typ.Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := s.Deliver(t.Context(), testDelivery("a.b"))
	if out.OK || !strings.Contains(out.Error, "destination refused") || !strings.Contains(out.Error, "loopback") {
		t.Fatalf("Deliver = %+v, want a loopback refusal", out)
	}
	if err := s.Probe(t.Context(), sink.ProbeRequest{Timeout: time.Second}); err == nil || !strings.Contains(err.Error(), "destination refused") {
		t.Fatalf("Probe = %v, want a refusal", err)
	}
	if n := dialled.Load(); n != 0 {
		t.Fatalf("dialled %d times despite the refusal", n)
	}
}

// TestDeliverHonoursTimeout points a sink at a server that accepts
// connections and never answers, as a hung broker would.
func TestDeliverHonoursTimeout(t *testing.T) {
	hole := sinktest.NewBlackhole(t)
	typ := NewType(Options{AllowPrivate: true})
	cfg, err := typ.Parse(json.RawMessage(`{"type":"rabbitmq","url":"amqp://guest:guest@` + hole.Addr() + `/","exchange":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := typ.Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	d := testDelivery("a.b")
	d.Timeout = 300 * time.Millisecond
	start := time.Now()
	out := s.Deliver(t.Context(), d)
	elapsed := time.Since(start)
	if out.OK || out.Error != "no confirmation within 300ms" {
		t.Fatalf("Deliver = %+v, want a timeout failure", out)
	}
	if elapsed > 2*time.Second {
		t.Fatalf("Deliver took %s, want about its 300ms timeout", elapsed)
	}
	err = s.Probe(t.Context(), sink.ProbeRequest{Timeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "within 300ms") {
		t.Fatalf("Probe = %v, want a timeout failure", err)
	}
}

type staticResolver map[string]netip.Addr

func (r staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if ip, ok := r[host]; ok {
		return []netip.Addr{ip}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}
