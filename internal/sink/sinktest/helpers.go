package sinktest

import (
	"encoding/json"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hubctl/hubctl/internal/sink"
)

// Open parses object (the suite's way: "type" is added) with typ and opens
// the sink as dispatch does, with signingSecrets for a webhook. The sink is
// closed when the test ends, and a failing Close fails the test.
func Open(tb testing.TB, typ sink.Type, object map[string]any, signingSecrets ...string) sink.Sink {
	tb.Helper()
	raw, err := json.Marshal(withType(object, typ.Name()))
	if err != nil {
		tb.Fatalf("sinktest: sink object: %v", err)
	}
	cfg, err := typ.Parse(raw)
	if err != nil {
		tb.Fatalf("sinktest: Parse: %v", err)
	}
	s, err := typ.Open(cfg, signingSecrets)
	if err != nil {
		tb.Fatalf("sinktest: Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("sinktest: Close: %v", err)
		}
	})
	return s
}

// Blackhole is a TCP listener on 127.0.0.1 that accepts connections and
// never answers, as a hung server would. It is closed, with every
// connection it accepted, when the test ends.
type Blackhole struct {
	listener net.Listener
	accepted atomic.Int64
}

// NewBlackhole starts a blackhole.
func NewBlackhole(tb testing.TB) *Blackhole {
	tb.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("sinktest: blackhole: %v", err)
	}
	b := &Blackhole{listener: listener}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			b.accepted.Add(1)
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	})
	tb.Cleanup(func() {
		_ = listener.Close()
		wg.Wait()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return b
}

// Addr is the blackhole's host:port.
func (b *Blackhole) Addr() string { return b.listener.Addr().String() }

// Accepted is the number of connections it accepted so far.
func (b *Blackhole) Accepted() int { return int(b.accepted.Load()) }

// ClosedAddr is a host:port on 127.0.0.1 where nothing listens: a port the
// system just handed out and took back, so connecting is refused at once
// (unless another process takes the port in between, which is unlikely).
func ClosedAddr(tb testing.TB) string {
	tb.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("sinktest: %v", err)
	}
	addr := listener.Addr().String()
	if err := listener.Close(); err != nil {
		tb.Fatalf("sinktest: %v", err)
	}
	return addr
}
