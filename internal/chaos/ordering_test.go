//go:build linux

package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/freeport"
	"github.com/hubctl/hubctl/internal/testutil/wait"
	"github.com/hubctl/hubctl/pkg/hubapi"
	"github.com/hubctl/hubctl/pkg/webhook"
)

// orderingSubjects are the ordering keys of the ordering scenario: enough
// that a killed instance holds some of them and the other instance others.
var orderingSubjects = func() []string {
	out := make([]string, 12)
	for i := range out {
		out[i] = fmt.Sprintf("acct-%02d", i+1)
	}
	return out
}()

// failRatio is how often the ordered subscription's receiver refuses a
// delivery.
const failRatio = 0.25

// orderedSubscription is a webhook subscription ordered by subject and its
// receiver.
type orderedSubscription struct {
	id       string
	receiver *flakyReceiver
}

// addOrderedSubscription subscribes a receiver that fails at random, with
// deliveries ordered by subject, retried a few hundred milliseconds apart.
func (w *world) addOrderedSubscription() *orderedSubscription {
	w.t.Helper()
	secret := "whsec_chaos_" + randomHex(16)
	rc := startFlakyReceiver(secret, failRatio)
	w.t.Cleanup(rc.srv.Close)
	schedule := []string{"0s", "100ms", "100ms", "200ms", "200ms", "300ms", "300ms", "500ms", "500ms", "1s", "1s", "2s"}
	created, err := w.tenant.CreateSubscription(w.t.Context(), "", hubapi.SubscriptionCreate{
		Name: "chaos ordered", Sink: json.RawMessage(`{"type":"webhook","url":"` + rc.srv.URL + `"}`),
		EventTypes: []string{"transaction.*"}, RetrySchedule: schedule, AttemptTimeout: attemptTimeout,
		SigningSecret: secret, Ordering: "subject",
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return &orderedSubscription{id: w.verified(created.Subscription), receiver: rc}
}

// flakyReceiver is a webhook destination on loopback that refuses a share
// of deliveries at random (503) and remembers, in the order it accepted
// them, the first successful delivery of each event.
type flakyReceiver struct {
	srv      *httptest.Server
	secret   string
	inflight atomic.Int32

	mu        sync.Mutex
	rnd       *rand.Rand
	failRatio float64
	firsts    []arrival // first successful delivery of each event, in order
	delivered map[string]bool
	refused   int
	again     int // successful deliveries of an event already delivered
	forged    int
}

type arrival struct {
	id string
	at time.Time
}

func startFlakyReceiver(secret string, failRatio float64) *flakyReceiver {
	r := &flakyReceiver{secret: secret, failRatio: failRatio, delivered: make(map[string]bool),
		rnd: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

func (r *flakyReceiver) serve(w http.ResponseWriter, req *http.Request) {
	_, ok := readVerified(w, req, r.secret, func() {
		r.mu.Lock()
		r.forged++
		r.mu.Unlock()
	})
	if !ok {
		return
	}
	r.inflight.Add(1)
	defer r.inflight.Add(-1)
	// A few milliseconds per delivery leave attempts in flight for a kill
	// to land in.
	time.Sleep(time.Duration(rand.IntN(10)) * time.Millisecond)
	id := req.Header.Get(webhook.HeaderEventID)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rnd.Float64() < r.failRatio {
		r.refused++
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	// Accepted under the lock, so the order of firsts is the order the
	// receiver answered them: the hub sends a key's next event only once
	// it has recorded this answer.
	if r.delivered[id] {
		r.again++
	} else {
		r.delivered[id] = true
		r.firsts = append(r.firsts, arrival{id, time.Now()})
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *flakyReceiver) snapshot() (firsts []arrival, refused, again, forged int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.firsts), r.refused, r.again, r.forged
}

// peer is a second `hubctl serve` on the world's database and Kafka
// cluster, a static member of its own.
type peer struct {
	addr string
	cmd  *exec.Cmd
	exit chan error
}

func (w *world) startPeer(instanceID string) *peer {
	w.t.Helper()
	ports, err := freeport.Pick(1)
	if err != nil {
		w.t.Fatal(err)
	}
	p := &peer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))}
	env := append(slices.DeleteFunc(slices.Clone(w.env), func(kv string) bool {
		return strings.HasPrefix(kv, "STREAMING_HUB_HTTP_LISTEN_ADDR=") || strings.HasPrefix(kv, "STREAMING_HUB_KAFKA_INSTANCE_ID=")
	}), "STREAMING_HUB_HTTP_LISTEN_ADDR="+p.addr, "STREAMING_HUB_KAFKA_INSTANCE_ID="+instanceID)
	log, err := os.Create(filepath.Join(w.dir, "peer.log"))
	if err != nil {
		w.t.Fatal(err)
	}
	p.cmd, p.exit = w.spawn(hubctl(w.t), env, log)
	w.t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exit
		if w.t.Failed() {
			out, _ := os.ReadFile(log.Name())
			w.t.Logf("peer log (last 40 lines):\n%s", lastLines(string(out), 40))
		}
		_ = log.Close()
	})
	w.waitFor("the second hub to be ready", func() bool { return readyAt(p.addr) })
	return p
}

// heldLeases are the ordering keys of the ordered subscription whose job
// in flight is leased to the process with pid under a lease not yet ended,
// each with its lease's end, and the ids of those jobs' events.
func (w *world) heldLeases(pid int) (until map[string]time.Time, events map[string]bool) {
	w.t.Helper()
	rows, err := w.pool.Query(context.Background(), `
		SELECT j.ordering_key, j.lease_until, e.id::text FROM delivery_jobs j JOIN events e ON e.seq = j.event_seq
		WHERE j.subscription_id = $1 AND j.state = 'in_flight' AND j.lease_owner LIKE $2 AND j.lease_until > now()`,
		w.ordered.id, "%/"+strconv.Itoa(pid)+"/%")
	if err != nil {
		w.t.Fatal(err)
	}
	until, events = map[string]time.Time{}, map[string]bool{}
	var (
		key, event string
		lease      time.Time
	)
	if _, err := pgx.ForEachRow(rows, []any{&key, &lease, &event}, func() error {
		if old, ok := until[key]; !ok || lease.Before(old) {
			until[key] = lease
		}
		events[event] = true
		return nil
	}); err != nil {
		w.t.Fatal(err)
	}
	return until, events
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// tcpPorts are the local ports of the TCP sockets the process with pid
// holds open: its database connections among them, which PostgreSQL
// lists by client_port.
func tcpPorts(t *testing.T, pid int) []int32 {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if inode, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var ports []int32
	for _, table := range []string{"tcp", "tcp6"} {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			t.Fatal(err)
		}
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		for line := range strings.Lines(string(raw)) {
			f := strings.Fields(line)
			if len(f) < 10 || !inodes[f[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(f[1], ":")
			port, err := strconv.ParseInt(hexPort, 16, 32)
			if err != nil {
				t.Fatalf("/proc/%d/net/%s: local address %q: %v", pid, table, f[1], err)
			}
			ports = append(ports, int32(port))
		}
	}
	return ports
}

// heldKeys are one kill's keys whose job in flight stayed leased to the
// killed process, each until its lease ends, as seen from once its
// sessions had ended (from), and those jobs' events: a request the process
// sent before it died may still be answered after that. end is when the
// first of the leases ends.
type heldKeys struct {
	from, end time.Time
	until     map[string]time.Time
	events    map[string]bool
}

// others counts the first deliveries of the other keys' events between
// from and end.
func (h heldKeys) others(r *flakyReceiver, subjectOf map[string]string) int {
	firsts, _, _, _ := r.snapshot()
	n := 0
	for _, a := range firsts {
		if _, isHeld := h.until[subjectOf[a.id]]; !isHeld && !a.at.Before(h.from) && a.at.Before(h.end) {
			n++
		}
	}
	return n
}

// TestChaosOrderedDelivery runs two `hubctl serve` instances with a
// subscription ordered by subject whose receiver refuses a quarter of the
// deliveries at random, and SIGKILLs one of them while it holds ordered
// deliveries in flight, restarting it at once. The keys it held wait for
// their leases to expire (they must not move before: the job in flight is
// their head) while the other keys go on; in the end every event has
// been delivered, and each subject's first successful deliveries arrived
// in seq order.
func TestChaosOrderedDelivery(t *testing.T) {
	prelude(t)
	kills := max(1, rounds(t)/4)
	w := newWorld(t, worldOptions{instanceID: staticID, subjects: orderingSubjects})
	p := w.startPeer("hub-1")
	var r report
	r.line("scenario ordered delivery: 2 instances, %d subjects, receiver refusing %.0f%% at random, %d SIGKILL(s) of one instance",
		len(orderingSubjects), failRatio*100, kills)
	r.line("  kill  keys held by the killed process  other keys delivered until the first held lease ended (held keys: must be 0)")

	var (
		killedAt []time.Time
		helds    []heldKeys
	)
	for i := range kills {
		time.Sleep(time.Second + time.Duration(rand.IntN(1000))*time.Millisecond)
		pid := w.hub.Process.Pid
		deadline := time.Now().Add(3 * time.Second)
		for time.Now().Before(deadline) {
			if w.ordered.receiver.inflight.Load() > 0 {
				if until, _ := w.heldLeases(pid); len(until) > 0 {
					break
				}
			}
			time.Sleep(time.Millisecond)
		}
		ports := tcpPorts(t, pid)
		if len(ports) == 0 {
			t.Fatalf("found no TCP socket of the hub (pid %d), so none of its database sessions", pid)
		}
		killedAt = append(killedAt, time.Now())
		w.kill()
		rec := w.watchRecovery(w.restart())
		if rec.ready > restartBound {
			t.Errorf("kill %d: ready after %v; the bound is %v", i+1, rec.ready, restartBound)
		}

		// What the dead process had sent lands once its database sessions
		// have ended: a statement it sent finishes and commits without it
		// (a batch of successes it was recording frees their keys). The
		// keys whose job in flight is still leased to it then stay where
		// they are until the leases expire; the others are delivered
		// meanwhile. Time spent by a loaded machine only narrows the
		// window, which lasts a lease (over 25s).
		w.waitFor("the killed process's database sessions to end", func() bool {
			return w.count(`SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND client_port = ANY($1) AND backend_start < $2`, ports, killedAt[i]) == 0
		})
		h := heldKeys{from: time.Now(), end: time.Now().Add(patience)}
		h.until, h.events = w.heldLeases(pid)
		for _, until := range h.until {
			h.end = minTime(h.end, until)
		}
		helds = append(helds, h)
		if len(h.until) < len(orderingSubjects) && time.Now().Before(h.end) {
			wait.Poll{Patience: time.Until(h.end), Interval: 50 * time.Millisecond}.Until(t,
				fmt.Sprintf("kill %d: another key delivered while %v waited for the killed process's leases", i+1, slices.Sorted(maps.Keys(h.until))),
				func() bool { return h.others(w.ordered.receiver, w.producer.subjectsOf()) > 0 })
		}
	}

	v := w.settle(killedAt)
	valid := w.acked
	w.waitFor("every produced event delivered to the ordered subscription", func() bool {
		firsts, _, _, _ := w.ordered.receiver.snapshot()
		return len(firsts) >= len(valid)
	})
	w.waitFor("every job of the ordered subscription succeeded", func() bool {
		states := w.jobStatesOf(w.ordered.id)
		return states["succeeded"] == len(valid) && len(states) == 1
	})
	firsts, refused, again, forged := w.ordered.receiver.snapshot()
	for i, h := range helds {
		r.line("  %4d  %-31s  %d", i+1, strings.Join(slices.Sorted(maps.Keys(h.until)), ","), h.others(w.ordered.receiver, w.subjectOf))
		for _, a := range firsts {
			s := w.subjectOf[a.id]
			if until, isHeld := h.until[s]; isHeld && !h.events[a.id] && !a.at.Before(h.from) && a.at.Before(until) {
				t.Errorf("kill %d: key %s, whose job in flight was leased to the killed process until %s, delivered an event at %s",
					i+1, s, until.Format(time.RFC3339Nano), a.at.Format(time.RFC3339Nano))
			}
		}
	}
	if forged > 0 {
		t.Errorf("%d deliveries to the ordered subscription failed signature verification", forged)
	}
	seqOf := w.seqs()
	bySubject := map[string][]int64{}
	produced := map[string]int{}
	for _, id := range valid {
		produced[w.subjectOf[id]]++
	}
	for _, a := range firsts {
		s, ok := w.subjectOf[a.id]
		if !ok {
			t.Errorf("the ordered subscription received %s, which nobody produced", a.id)
			continue
		}
		bySubject[s] = append(bySubject[s], seqOf[a.id])
	}
	outOfOrder := 0
	for _, s := range orderingSubjects {
		seqs := bySubject[s]
		if len(seqs) != produced[s] {
			t.Errorf("subject %s: %d events delivered, %d produced", s, len(seqs), produced[s])
		}
		for k := 1; k < len(seqs); k++ {
			if seqs[k] <= seqs[k-1] {
				outOfOrder++
				t.Errorf("subject %s: event of seq %d first delivered after seq %d", s, seqs[k], seqs[k-1])
			}
		}
	}
	r.line("  ordered    %d/%d delivered, %d first deliveries out of seq order; %d refused at random, %d delivered again",
		len(firsts), len(valid), outOfOrder, refused, again)
	r.line("  parking    %.0f keys released by a sweep rather than by the transition ahead of them (the running processes' count)",
		metricSum(t, "streaming_hub_ordering_keys_swept_total", w.addr, p.addr))
	r.verdict(v)
	t.Log("\n" + r.b.String())
}

// metricSum adds up an unlabelled counter or gauge over the hubs at addrs.
func metricSum(t *testing.T, name string, addrs ...string) float64 {
	t.Helper()
	sum := 0.0
	for _, addr := range addrs {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Errorf("read the metrics of %s: %v", addr, err)
			continue
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Errorf("read the metrics of %s: %v", addr, err)
			continue
		}
		for line := range strings.SplitSeq(string(body), "\n") {
			if value, ok := strings.CutPrefix(line, name+" "); ok {
				v, err := strconv.ParseFloat(value, 64)
				if err != nil {
					t.Errorf("metric %s of %s: %v", name, addr, err)
				}
				sum += v
			}
		}
	}
	return sum
}

// seqs maps every stored event's id to its seq.
func (w *world) seqs() map[string]int64 {
	w.t.Helper()
	rows, err := w.pool.Query(context.Background(), `SELECT id::text, seq FROM events`)
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]int64{}
	var (
		id  string
		seq int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &seq}, func() error { out[id] = seq; return nil }); err != nil {
		w.t.Fatal(err)
	}
	return out
}
