package dispatch

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
	"github.com/hubctl/hubctl/internal/testutil/syncbuf"
	"github.com/hubctl/hubctl/internal/testutil/wait"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// TestSuccessesOutliveADatabaseOutage: attempts that succeeded while the
// database was unreachable are recorded when it returns, within their
// leases, so no job is sent twice. The outage (4s) is longer than a
// recorder giving up after a few quick retries (2.6s) would survive, and
// shorter than the leases (~12s).
func TestSuccessesOutliveADatabaseOutage(t *testing.T) {
	const jobs, outage = 60, 4 * time.Second
	e, proxy, viaProxy := newProxiedEnv(t, 20)

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
		o.Queue, o.Catalog, o.Lifecycle, o.OnCall = viaProxy.Queue, viaProxy.Catalog, viaProxy.Lifecycle, viaProxy.OnCall
		o.LeaseMargin = time.Second
		o.Dispatch.Workers = 4
	})

	// After the outage the claimer is in its backoff (up to 5s), so this
	// waits longer than waitFor does.
	wait.Poll{Patience: 2 * waitTimeout, Interval: 20 * time.Millisecond,
		Explain: func() string { return fmt.Sprint("jobs by state: ", e.jobStates(sub)) },
	}.Until(t, "every job to succeed", func() bool { return e.jobStates(sub)["succeeded"] == jobs })
	if proxy.cuts.Load() == 0 {
		t.Fatal("the outage never happened")
	}
	perEvent := map[string]int{}
	for _, d := range rc.Requests() {
		perEvent[d.Header.Get("X-Lerian-Event-Id")]++
	}
	duplicates := len(rc.Requests()) - len(perEvent)
	t.Logf("%d deliveries of %d events across a %s outage: %d duplicates", len(rc.Requests()), len(perEvent), outage, duplicates)
	if duplicates != 0 || len(perEvent) != jobs {
		t.Errorf("%d events delivered %d times, want %d delivered once each", len(perEvent), len(rc.Requests()), jobs)
	}
}

// TestASuccessWhoseCommitAnswerWasLostIsFoundRecorded: the recorder's
// transaction commits but the connection dies before its answer arrives,
// so the recorder tries again. The retry finds the attempt recorded and
// says so; it neither fails on the attempt's primary key (logging that
// the job will be retried, which it will not be) nor records it twice.
func TestASuccessWhoseCommitAnswerWasLostIsFoundRecorded(t *testing.T) {
	e, proxy, viaProxy := newProxiedEnv(t, 4)

	rc := newReceiver(t, func(r *http.Request, _ int) int {
		// The recording's answer returns the attempt's id, so it is the
		// one answer that carries it (as binary or as text).
		id := uuid.MustParse(r.Header.Get("X-Lerian-Delivery-Id"))
		proxy.LoseAnswersCarrying(id[:])
		proxy.LoseAnswersCarrying([]byte(id.String()))
		return http.StatusOK
	})
	sub, _ := e.webhookSub("acme", rc.URL)
	e.insertJobs("acme", sub, 1)
	var logs syncbuf.Buffer
	e.start(func(o *Options) {
		o.Queue, o.Catalog, o.Lifecycle, o.OnCall = viaProxy.Queue, viaProxy.Catalog, viaProxy.Lifecycle, viaProxy.OnCall
		o.Dispatch.Workers = 1
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	waitFor(t, "the success to commit unanswered", func() bool { return e.jobStates(sub)["succeeded"] == 1 })
	proxy.Cut()
	proxy.Restore()
	waitFor(t, "the retry to find the attempt", func() bool {
		return strings.Contains(logs.String(), "attempt was recorded by a try whose answer the database connection lost")
	})
	if strings.Contains(logs.String(), "cannot record the attempt") {
		t.Errorf("the retry reported a failure:\n%s", logs.String())
	}
	var attempts int
	if err := e.store.Pool.QueryRow(t.Context(), `SELECT count(*) FROM all_delivery_attempts`).Scan(&attempts); err != nil || attempts != 1 {
		t.Errorf("%d attempts recorded (%v), want 1", attempts, err)
	}
	if n := len(rc.Requests()); n != 1 {
		t.Errorf("%d deliveries, want 1", n)
	}
}

// newProxiedEnv is an env whose dispatcher is to reach the database
// through a cutProxy (the returned store, of maxConns connections), while
// the test reads and writes it directly (e.store).
func newProxiedEnv(t *testing.T, maxConns int32) (*env, *cutProxy, *storetest.Store) {
	t.Helper()
	e := newEnv(t)
	proxy := newCutProxy(t, pgtest.DSN(t))
	e.store.Close()
	direct, err := storetest.Connect(t.Context(), proxy.target, pg.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(direct.Close)
	e.store = direct
	viaProxy, err := storetest.Connect(t.Context(), proxy.DSN(), pg.Options{MaxConns: maxConns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(viaProxy.Close)
	e.subs = e.subscriptions(true)
	return e, proxy, viaProxy
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
	marks    [][]byte // see LoseAnswersCarrying
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
	go func() { _, _ = io.Copy(client, &answers{p: p, server: server}); done <- struct{}{} }()
	<-done
	_ = client.Close()
	_ = server.Close()
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}

// answers reads what the server sends to one client. Once an answer
// carries one of the proxy's marks, it and everything after it on that
// connection are dropped: the server's work goes on (its transaction
// commits), and the client hears nothing of it.
type answers struct {
	p      *cutProxy
	server net.Conn
	lost   bool
}

func (a *answers) Read(b []byte) (int, error) {
	for {
		n, err := a.server.Read(b)
		if !a.lost {
			a.lost = a.p.marked(b[:n])
		}
		if !a.lost || err != nil {
			return n, err
		}
	}
}

// LoseAnswersCarrying makes the proxy drop, on whichever connection it
// comes, the answer that carries mark and all that follows it there.
func (p *cutProxy) LoseAnswersCarrying(mark []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.marks = append(p.marks, mark)
}

func (p *cutProxy) marked(answer []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.ContainsFunc(p.marks, func(mark []byte) bool { return bytes.Contains(answer, mark) })
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

// Restore accepts connections again, and loses no more answers.
func (p *cutProxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
	p.marks = nil
}
