package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/maintenance"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
	"github.com/hubctl/hubctl/internal/testutil/storetest"

	"github.com/hubctl/hubctl/pkg/hubapi"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

// verifyingReceiver is a subscriber as a subscriber would write it: it
// verifies every request's signature with pkg/webhook before answering 204.
func verifyingReceiver(b *testing.B, secret string, delivered *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if err := whsign.VerifyRequest(r, body, []string{secret}, time.Now(), whsign.DefaultTolerance); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Header.Get(whsign.HeaderEventType) != whsign.VerificationEventType {
			delivered.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkDispatch measures deliveries per second through the whole
// dispatch path (claim, sink, signed POST verified by the receiver, record)
// with 8 workers, against the same receiver driven by a bare Go HTTP client
// loop at the same concurrency, and reports the ratio: with the default
// claim batch (16) and with 64. Run it with a fixed count, e.g.
// -benchtime=20000x, so both sides move the same number of requests.
func BenchmarkDispatch(b *testing.B) {
	for _, claimBatch := range []int{16, 64} {
		b.Run(fmt.Sprintf("claim_batch=%d", claimBatch), func(b *testing.B) {
			benchmarkDispatch(b, claimBatch, nil)
		})
	}
}

// benchmarkDispatch runs BenchmarkDispatch's measure; prepare, when set,
// fills the database first, and configure adjusts the dispatcher.
func benchmarkDispatch(b *testing.B, claimBatch int, prepare func(*env), configure ...func(*env, *Options)) {
	const workers = 8
	e := newEnv(b)
	// The day partitions a running hub's maintainer keeps: without them
	// every job lands in the default partition, whose lone statistics
	// plan the recordings unlike any deployment's.
	if err := e.store.EnsurePartitions(context.Background(), time.Now()); err != nil {
		b.Fatal(err)
	}
	if prepare != nil {
		prepare(e)
	}
	const secret = "whsec_benchmark_secret_0123456789"
	var delivered atomic.Int64
	rc := verifyingReceiver(b, secret, &delivered)
	sub, _ := e.webhookSub("bench", rc.URL, func(in *hubapi.SubscriptionCreate) { in.SigningSecret = secret })
	e.insertJobs("bench", sub, b.N)

	b.ResetTimer()
	pgBefore, goBefore := backendCPU(b, e.store), processCPU(b)
	start := time.Now()
	// The test env's reap interval (50ms) keeps tests quick; at it the
	// backlog gauges' reading took a fifth of PostgreSQL's time here.
	e.reap = maintenance.DefaultReapInterval
	_, stop := e.start(func(o *Options) {
		o.Dispatch.Workers = workers
		o.Dispatch.ClaimBatch = claimBatch
		o.Dispatch.IdleInterval = 250 * time.Millisecond
		for _, f := range configure {
			f(e, o)
		}
	})
	// Counting the succeeded jobs scans the job table; polled every few
	// milliseconds for the whole run, it competed for the database with
	// the dispatch it times. The receiver's counter is free, so the table
	// is polled only once every job has been delivered, for the last
	// recordings.
	for delivered.Load() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	// By subscription, through its index: a count by tenant read every
	// partition whole, the history's millions of rows included.
	for e.count(`SELECT count(*) FROM delivery_jobs WHERE subscription_id = $1 AND state = 'succeeded'`, sub) < b.N {
		time.Sleep(time.Millisecond)
	}
	hubElapsed := time.Since(start)
	pgCPU, goCPU := backendCPU(b, e.store)-pgBefore, processCPU(b)-goBefore
	b.StopTimer()
	stop()
	if got := delivered.Load(); got != int64(b.N) {
		b.Fatalf("receiver verified %d deliveries, want %d", got, b.N)
	}

	goBefore = processCPU(b)
	bareElapsed := bareLoop(b, rc.URL, secret, workers, b.N)
	bareCPU := processCPU(b) - goBefore
	hubRate := float64(b.N) / hubElapsed.Seconds()
	bareRate := float64(b.N) / bareElapsed.Seconds()
	b.ReportMetric(hubRate, "deliveries/s")
	b.ReportMetric(bareRate, "bare_requests/s")
	b.ReportMetric(hubRate/bareRate, "ratio")
	perOp := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(perOp(pgCPU), "pg_cpu_µs/delivery")
	b.ReportMetric(perOp(goCPU), "go_cpu_µs/delivery")
	b.ReportMetric(perOp(bareCPU), "bare_cpu_µs/request")
	b.ReportMetric(0, "ns/op") // the rates are the result
}

// latencyRate is the event rate of BenchmarkDeliveryLatency, and
// minLatencyEvents the fewest events it produces: five seconds of load, so
// the p99 rests on 5,000 samples whatever b.N the framework starts with.
const (
	latencyRate      = 1000
	minLatencyEvents = 5 * latencyRate
)

// BenchmarkDeliveryLatency measures produce → delivered at a steady
// 1,000 events/s through the whole hub: kfake, ingest (consumer group,
// verdicts, inbox and job in one transaction), dispatch with the default
// settings, and a receiver that verifies each signature. Each event
// carries the time it was handed to the producer; the receiver subtracts
// it from the time it got the request. One op is one event, and at least
// minLatencyEvents are produced; run it with -benchtime=5000x.
//
// handoff=off is ingest on its own, its jobs claimed after a NOTIFY, as
// with the ingest and delivery roles in separate processes; handoff=on is
// `serve` with both, ingest handing first attempts to its dispatcher
// (docs/architecture.md, "First attempts handed over"). CPU per delivery
// counts this process (hub and receiver) and the PostgreSQL backends.
func BenchmarkDeliveryLatency(b *testing.B) {
	for _, handoff := range []bool{false, true} {
		name := "handoff=off"
		if handoff {
			name = "handoff=on"
		}
		b.Run(name, func(b *testing.B) { benchmarkDeliveryLatency(b, handoff) })
	}
}

func benchmarkDeliveryLatency(b *testing.B, handoff bool) {
	events := max(b.N, minLatencyEvents)
	e := newEnv(b)
	// The day partitions serve makes: without them every row lands in the
	// default partitions, which are read whole.
	if err := e.store.EnsurePartitions(context.Background(), time.Now()); err != nil {
		b.Fatal(err)
	}
	kafka := kafkatest.New(b, testTopic)
	const secret = "whsec_benchmark_secret_0123456789"
	rc := newLatencyReceiver(b, secret)
	e.webhookSub("bench", rc.URL, func(in *hubapi.SubscriptionCreate) { in.SigningSecret = secret })
	e.reap = maintenance.DefaultReapInterval
	d, _ := e.start(func(o *Options) {
		o.Dispatch.IdleInterval = 250 * time.Millisecond
	})
	var to queue.Handoff
	if handoff {
		to = d
	}
	startIngest(b, e.store, kafka.Brokers(), to)

	producer := kafka.Client(b, kgo.DefaultProduceTopic(testTopic), kgo.ProducerLinger(0))
	produced := make(chan error, events+1)
	produce := func(n int) {
		body := []byte(`{"n":` + strconv.Itoa(n) + `,"sent":` + strconv.FormatInt(time.Now().UnixNano(), 10) + `}`)
		rec := cloudEvent("bench", uuid.Must(uuid.NewV7()).String(), body)
		producer.Produce(context.Background(), rec, func(_ *kgo.Record, err error) { produced <- err })
	}
	// The consumer joins its group and the sink opens before the clock
	// starts: the figure is the steady state, not the start-up.
	produce(0)
	waitFor(b, "the warm-up delivery", func() bool { return rc.count() == 1 })
	rc.reset()

	b.ResetTimer()
	pgBefore, goBefore := backendCPU(b, e.store), processCPU(b)
	start := time.Now()
	for n := 1; n <= events; n++ {
		// Event n is due n/latencyRate seconds after the start; a late
		// loop catches up at once rather than drifting.
		if wait := time.Until(start.Add(time.Duration(n) * time.Second / latencyRate)); wait > 0 {
			time.Sleep(wait)
		}
		produce(n)
	}
	offered := float64(events) / time.Since(start).Seconds()
	deadline := time.Now().Add(30 * time.Second)
	for rc.count() < events {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d events delivered 30s after the last was produced", rc.count(), events)
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.StopTimer()
	pgCPU, goCPU := backendCPU(b, e.store)-pgBefore, processCPU(b)-goBefore
	for range events + 1 {
		if err := <-produced; err != nil {
			b.Fatalf("produce: %v", err)
		}
	}

	latencies := rc.latencies()
	slices.Sort(latencies)
	ms := func(q float64) float64 {
		return float64(latencies[int(q*float64(len(latencies)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(offered, "events/s")
	b.ReportMetric(ms(0.50), "p50_ms")
	b.ReportMetric(ms(0.99), "p99_ms")
	b.ReportMetric(ms(1), "max_ms")
	perEvent := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(events) }
	b.ReportMetric(perEvent(pgCPU), "pg_cpu_µs/delivery")
	b.ReportMetric(perEvent(goCPU), "go_cpu_µs/delivery")
	var handed dto.Metric
	if err := d.metrics.handedOver.Write(&handed); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(handed.GetCounter().GetValue()/float64(events+1), "handed_over/delivery")
	b.ReportMetric(0, "ns/op") // the latencies are the result
}

// latencyReceiver verifies every delivery's signature and keeps how long
// after its "sent" stamp it arrived.
type latencyReceiver struct {
	*httptest.Server
	mu   sync.Mutex
	took []time.Duration
}

func newLatencyReceiver(b *testing.B, secret string) *latencyReceiver {
	rc := &latencyReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if err := whsign.VerifyRequest(r, body, []string{secret}, arrived, whsign.DefaultTolerance); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Header.Get(whsign.HeaderEventType) != whsign.VerificationEventType {
			var stamp struct{ Sent int64 }
			if err := json.Unmarshal(body, &stamp); err != nil || stamp.Sent == 0 {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			rc.mu.Lock()
			rc.took = append(rc.took, arrived.Sub(time.Unix(0, stamp.Sent)))
			rc.mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(rc.Close)
	return rc
}

func (rc *latencyReceiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.took)
}

func (rc *latencyReceiver) reset() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.took = nil
}

func (rc *latencyReceiver) latencies() []time.Duration {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.took)
}

// bareLoop posts n signed requests to url from `concurrency` goroutines
// with a plain net/http client, the ceiling any dispatcher can reach
// against this receiver on this machine.
func bareLoop(b *testing.B, url, secret string, concurrency, n int) time.Duration {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
	defer client.CloseIdleConnections()
	body := []byte(`{"n":1}`)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range concurrency {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(whsign.HeaderDeliveryID, uuid.Must(uuid.NewV7()).String())
				whsign.SignHeader(req.Header, []string{secret}, time.Now().Unix(), body)
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusNoContent {
					b.Errorf("bare request answered %s", strconv.Itoa(resp.StatusCode))
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// processCPU is the CPU time this process has used so far: dispatcher,
// receiver and HTTP client together.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendCPU is the CPU time the PostgreSQL backends connected to the
// benchmark's database have used so far, read from /proc: what dispatch
// costs the database, whatever else the machine runs meanwhile. Backends
// that opened during the run count from zero; one that closed before the
// end would be missed, and the pool keeps its connections for the run.
func backendCPU(b *testing.B, st *storetest.Store) time.Duration {
	rows, err := st.Pool.Query(context.Background(), `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		b.Fatalf("backend pids: %v", err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		b.Fatalf("backend pids: %v", err)
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	var ticks int64
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			b.Skipf("cannot read the backends' CPU time (PostgreSQL on another machine?): %v", err)
		}
		// The command name in parentheses may hold spaces; fields are
		// counted after its closing parenthesis.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		utime, _ := strconv.ParseInt(fields[11], 10, 64)
		stime, _ := strconv.ParseInt(fields[12], 10, 64)
		ticks += utime + stime
	}
	return time.Duration(ticks) * time.Second / ticksPerSecond
}
