package dispatch

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// TestSuccessesOutliveADatabaseOutage: attempts that succeeded while the
// database was unreachable are recorded when it returns, within their
// leases, so no job is sent twice. The outage (4s) is longer than a
// recorder giving up after a few quick retries (2.6s) would survive, and
// shorter than the leases (~12s).
func TestSuccessesOutliveADatabaseOutage(t *testing.T) {
	const jobs, outage = 60, 4 * time.Second
	e := newEnv(t)
	proxy := newCutProxy(t, pgtest.DSN(t))
	// The dispatcher reaches the database through the proxy; the test
	// reads and writes it directly.
	e.store.Close()
	direct, err := store.Open(t.Context(), proxy.target, store.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(direct.Close)
	e.store = direct
	viaProxy, err := store.Open(t.Context(), proxy.DSN(), store.Options{MaxConns: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(viaProxy.Close)
	e.subs = e.subscriptions(true)

	var cut sync.Once
	rc := newReceiver(t, func(_ *http.Request, n int) int {
		// The first deliveries answer, then the database goes away before
		// the recorder can store them.
		if n == jobs/4 {
			cut.Do(func() {
				proxy.Cut()
				time.AfterFunc(outage, proxy.Restore)
			})
		}
		return http.StatusOK
	})
	sub, _ := e.webhookSub("acme", rc.URL, func(in *hubapi.SubscriptionCreate) { in.AttemptTimeout = "1s" })
	e.insertJobs("acme", sub, jobs)
	e.start(func(o *Options) {
		o.Store = viaProxy
		o.LeaseMargin = time.Second
		o.Dispatch.Workers = 4
	})

	// After the outage the claimer is in its backoff (up to 5s), so this
	// waits longer than waitFor does.
	for deadline := time.Now().Add(2 * waitTimeout); e.jobStates(sub)["succeeded"] != jobs; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for every job to succeed: %v", e.jobStates(sub))
		}
	}
	if proxy.cuts.Load() == 0 {
		t.Fatal("the outage never happened")
	}
	perEvent := map[string]int{}
	for _, d := range rc.got() {
		perEvent[d.Header.Get("X-Lerian-Event-Id")]++
	}
	duplicates := len(rc.got()) - len(perEvent)
	t.Logf("%d deliveries of %d events across a %s outage: %d duplicates", len(rc.got()), len(perEvent), outage, duplicates)
	if duplicates != 0 || len(perEvent) != jobs {
		t.Errorf("%d events delivered %d times, want %d delivered once each", len(perEvent), len(rc.got()), jobs)
	}
}

// cutProxy forwards TCP connections to PostgreSQL until Cut, which drops
// every connection and refuses new ones until Restore.
type cutProxy struct {
	t        testing.TB
	target   string // the database's DSN
	listener net.Listener
	upstream string
	mu       sync.Mutex
	down     bool
	conns    map[net.Conn]struct{}
	cuts     atomic.Int32
}

func newCutProxy(t testing.TB, dsn string) *cutProxy {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skipf("the test database's DSN names no TCP host (%v); the outage test needs one", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{t: t, target: dsn, listener: ln, upstream: u.Host, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { _ = ln.Close(); p.Cut() })
	go p.accept()
	return p
}

// DSN is the database's DSN through the proxy.
func (p *cutProxy) DSN() string {
	u, _ := url.Parse(p.target)
	u.Host = p.listener.Addr().String()
	return u.String()
}

func (p *cutProxy) accept() {
	for {
		client, err := p.listener.Accept()
		if err != nil {
			return
		}
		go p.serve(client)
	}
}

func (p *cutProxy) serve(client net.Conn) {
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		_ = client.Close()
		return
	}
	p.mu.Unlock()
	server, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.conns[client], p.conns[server] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) { _, _ = io.Copy(dst, src); done <- struct{}{} }
	go pipe(server, client)
	go pipe(client, server)
	<-done
	_ = client.Close()
	_ = server.Close()
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}

// Cut drops every connection and refuses new ones.
func (p *cutProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	p.cuts.Add(1)
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// Restore accepts connections again.
func (p *cutProxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}
