package sinktest

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/sink"
)

// memoryType is a sink type whose destinations live in the test process:
// the smallest sink that conforms, run through the suite to show the suite
// passes a correct sink and how a harness is written.
type memoryType struct {
	mu     sync.Mutex
	queues map[string]*memoryQueue // by destination
}

type memoryQueue struct {
	behaviour string // "accept", "refuse", "hang", "down"
	got       []Message
}

func (m *memoryType) Name() string { return "memory" }

func (m *memoryType) Parse(raw json.RawMessage) (sink.Config, error) {
	fields, err := sink.DecodeObject(raw, "memory", "queue", "token")
	if err != nil {
		return sink.Config{}, err
	}
	var queue, token string
	if json.Unmarshal(fields["queue"], &queue) != nil || queue == "" {
		return sink.Config{}, &sink.FieldError{Field: "sink.queue", Message: "is required"}
	}
	if json.Unmarshal(fields["token"], &token) != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink.token", Message: "must be a string"}
	}
	public, _ := json.Marshal(map[string]string{"queue": queue})
	creds, _ := json.Marshal(map[string]string{"token": token})
	return sink.Config{Public: public, Credentials: creds, Destination: "memory://" + strings.ToLower(queue)}, nil
}

func (m *memoryType) Open(cfg sink.Config, _ []string) (sink.Sink, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[cfg.Destination]
	if q == nil {
		return nil, errors.New("no such queue")
	}
	return &memorySink{typ: m, queue: q}, nil
}

// add makes a queue that behaves as told and returns its name.
func (m *memoryType) add(behaviour string) string {
	name := "q-" + mustUUIDv7()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.queues == nil {
		m.queues = map[string]*memoryQueue{}
	}
	m.queues["memory://"+name] = &memoryQueue{behaviour: behaviour}
	return name
}

type memorySink struct {
	typ   *memoryType
	queue *memoryQueue
}

func (s *memorySink) attempt(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, sink.AttemptTimeout(timeout))
	defer cancel()
	switch s.queue.behaviour {
	case "refuse":
		return errors.New("queue refuses the message")
	case "hang":
		<-ctx.Done()
		return errors.New("no answer within the attempt timeout")
	case "down":
		return errors.New("queue is down")
	}
	return nil
}

func (s *memorySink) Deliver(ctx context.Context, d sink.Delivery) sink.Outcome {
	if err := s.attempt(ctx, d.Timeout); err != nil {
		return sink.Outcome{Error: err.Error()}
	}
	s.typ.mu.Lock()
	defer s.typ.mu.Unlock()
	s.queue.got = append(s.queue.got, Message{Body: d.Payload, Identity: map[Field]string{
		EventID: d.EventID, DeliveryID: d.DeliveryID, TenantID: d.TenantID, EventKey: d.EventKey,
		SchemaVersion: d.SchemaVersion, Time: FormatTime(d.Time),
	}})
	return sink.Outcome{OK: true}
}

func (s *memorySink) Probe(ctx context.Context, p sink.ProbeRequest) error {
	if s.queue.behaviour == "refuse" {
		return nil // reachable, just refusing messages
	}
	return s.attempt(ctx, p.Timeout)
}

func (s *memorySink) Close() error { return nil }

func TestSuitePassesAConformingSink(t *testing.T) {
	typ := &memoryType{}
	open := func(t *testing.T, behaviour string) sink.Sink {
		return Open(t, typ, map[string]any{"queue": typ.add(behaviour), "token": "t0ken-s3cret"})
	}
	Run(t, Harness{
		Type:             typ,
		Object:           map[string]any{"queue": "orders", "token": "t0ken-s3cret"},
		SameDestination:  map[string]any{"queue": "ORDERS", "token": "another-token"},
		OtherDestination: map[string]any{"queue": "invoices", "token": "t0ken-s3cret"},
		Credentials:      []string{"t0ken-s3cret"},
		Carries:          []Field{Time},
		Working: func(t *testing.T) (sink.Sink, Inbox) {
			name := typ.add("accept")
			s := Open(t, typ, map[string]any{"queue": name, "token": "t0ken-s3cret"})
			return s, func(testing.TB) []Message {
				typ.mu.Lock()
				defer typ.mu.Unlock()
				return typ.queues["memory://"+name].got
			}
		},
		Failing:     func(t *testing.T) sink.Sink { return open(t, "refuse") },
		Hanging:     func(t *testing.T) sink.Sink { return open(t, "hang") },
		Unreachable: func(t *testing.T) sink.Sink { return open(t, "down") },
	})
}

func TestObjectJSONOrdersFields(t *testing.T) {
	object := map[string]any{"b": 1, "a": "x", "c": []string{"y"}}
	if got := string(objectJSON(t, object, false)); got != `{"a":"x","b":1,"c":["y"]}` {
		t.Errorf("forward = %s", got)
	}
	if got := string(objectJSON(t, object, true)); got != `{"c":["y"],"b":1,"a":"x"}` {
		t.Errorf("backward = %s", got)
	}
}

func TestCredentialStrings(t *testing.T) {
	got := credentialStrings(t, json.RawMessage(`{"a":"one","b":{"c":["two",3]},"d":null}`))
	if len(got) != 2 || !strings.Contains(strings.Join(got, ","), "one") || !strings.Contains(strings.Join(got, ","), "two") {
		t.Fatalf("credentialStrings = %q, want one and two", got)
	}
	if got := credentialStrings(t, nil); got != nil {
		t.Fatalf("credentialStrings(nil) = %q", got)
	}
}

func TestMissingHarnessFields(t *testing.T) {
	got := Harness{Object: map[string]any{}}.missing()
	want := "Failing Hanging OtherDestination SameDestination Type Unreachable Working"
	if strings.Join(got, " ") != want {
		t.Fatalf("missing = %v, want %s", got, want)
	}
}

func TestBlackholeAndClosedAddr(t *testing.T) {
	hole := NewBlackhole(t)
	conn, err := (&net.Dialer{}).DialContext(t.Context(), "tcp", hole.Addr())
	if err != nil {
		t.Fatalf("dial the blackhole: %v", err)
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := conn.Read(make([]byte, 1)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read = %d, %v; want no answer until the deadline", n, err)
	}
	if hole.Accepted() != 1 {
		t.Fatalf("Accepted = %d, want 1", hole.Accepted())
	}
	if conn, err := net.Dial("tcp", ClosedAddr(t)); err == nil {
		conn.Close()
		t.Fatal("ClosedAddr accepted a connection")
	}
}
