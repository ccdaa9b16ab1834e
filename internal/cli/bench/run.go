package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hubctl/hubctl/internal/benchmark"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/events"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/listen"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// progressEvery is how often the progress line is redrawn.
const progressEvery = 250 * time.Millisecond

// cleanupTimeout bounds deleting the subscription at the end, which runs
// even after Ctrl-C.
const cleanupTimeout = 10 * time.Second

// run is the whole bench: receiver, subscription, bare loop, warm-up,
// measured run, result.
func run(ctx context.Context, opts *Options) error {
	f := opts.Factory
	cfg, err := events.KafkaConfig(f)
	if err != nil {
		return err
	}
	return hubaccess.RunForTenant(ctx, f, func(h hubapi.ControlPlane, tenant string) error {
		b := &bencher{opts: opts, hub: h, tenant: tenant, done: make(chan struct{}), warm: make(chan struct{})}
		return b.run(ctx, cfg)
	})
}

// bencher is one run's state. The receiver's goroutines write the
// delivery figures under mu.
type bencher struct {
	opts   *Options
	hub    hubapi.ControlPlane
	tenant string

	mu       sync.Mutex
	start    time.Time // the measured run's first produce; deliveries of events sent before are not its own
	warmID   string
	warmed   bool
	arrivals []arrival            // the measured run's deliveries, one per event
	acked    map[string]time.Time // when the broker acknowledged each measured event
	dups     int
	rejected int
	done     chan struct{} // closed when every measured event is delivered
	warm     chan struct{} // closed when the warm-up event is delivered
}

func (b *bencher) run(ctx context.Context, cfg *config.Config) error {
	f := b.opts.Factory
	secret, err := newSecret()
	if err != nil {
		return err
	}
	target := b.opts.URL
	if target == "" {
		stop, addr, err := b.serve(secret)
		if err != nil {
			return err
		}
		defer stop()
		target = "http://" + addr
	}

	sub, created, err := b.subscription(ctx, target, secret)
	if err != nil {
		return err
	}
	if created && !b.opts.Keep {
		defer b.deleteSubscription(ctx, sub.ID)
	}
	if err := b.waitActive(ctx, &sub); err != nil {
		return err
	}

	producer, err := events.NewProducer(ctx, cfg, sub.TenantID, EventKey, b.opts.Linger)
	if err != nil {
		return err
	}
	defer producer.Close()

	bare, err := b.bareLoop(ctx, target, secret)
	if err != nil {
		return err
	}
	if err := b.warmUp(ctx, producer, sub.ID); err != nil {
		return err
	}

	cpu := newCPUProbe(b.opts.HubPID, cfg.Postgres.DSN)
	wal := openWALProbe(ctx, cfg.Postgres.DSN)
	defer wal.close()
	walBefore := wal.read(ctx)
	before := cpu.read()
	timedOut, err := b.measure(ctx, producer, sub.ID)
	if err != nil {
		return err
	}
	after := cpu.read()
	walAfter := wal.read(ctx)

	result := b.result(bare, timedOut, before, after)
	result.Memory.HubPeakRSSMiB = cpu.hubPeakRSS()
	if walBefore.ok && walAfter.ok {
		result.WAL = benchmark.WALPerDelivery(walBefore.lsn, walAfter.lsn, result.Delivered)
	}
	if err := output.New(f.IOStreams, b.opts.Format).Print(result, table(result)); err != nil {
		return err
	}
	if timedOut {
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("timed out after %s: %d of %d events delivered", b.opts.Timeout, result.Delivered, result.Events))
	}
	return nil
}

// serve starts listen's verifying receiver on --addr and returns how to
// stop it and the address the hub is to reach.
func (b *bencher) serve(secret string) (stop func(), addr string, err error) {
	ln, err := net.Listen("tcp", b.opts.Addr)
	if err != nil {
		return nil, "", cmdutil.WithCode(cmdutil.ExitUnavailable, fmt.Errorf("listen on %s: %w", b.opts.Addr, err))
	}
	server := &http.Server{Handler: listen.NewVerifier([]string{secret}, time.Now, b.observe), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = server.Serve(ln) }()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(ctx)
	}
	return stop, dialable(ln.Addr()), nil
}

// observe is the receiver's report of one verified (or refused) request.
func (b *bencher) observe(d listen.Delivery, body []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case d.Verdict != "ok":
		b.rejected++
		return
	case d.EventType != EventKey: // the verification probe and the bare loop
		return
	case b.warmID != "" && d.EventID == b.warmID:
		if !b.warmed {
			b.warmed = true
			close(b.warm)
		}
		return
	}
	sent, ok := benchmark.SentAt(body)
	if !ok || b.start.IsZero() || sent.Before(b.start) {
		return // an earlier run's event, still being delivered
	}
	if d.Duplicate {
		b.dups++
		return
	}
	if len(b.arrivals) >= b.opts.Events {
		return
	}
	b.arrivals = append(b.arrivals, arrival{eventID: d.EventID, sent: sent, at: d.Time})
	if len(b.arrivals) == b.opts.Events {
		close(b.done)
	}
}

// arrival is one measured event's delivery: produced at sent, delivered
// at at.
type arrival struct {
	eventID  string
	sent, at time.Time
}

// ack records when the broker acknowledged a measured event.
func (b *bencher) ack(eventID string, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.acked[eventID] = at
}

// timings are the arrivals' produce→delivered latencies, the same timed
// from each event's acknowledgement (leaving out events whose
// acknowledgement was not seen: a failed produce ends the run anyway),
// and the latest arrival.
func (b *bencher) timings() (fromProduce, fromAck []time.Duration, last time.Time) {
	for _, a := range b.arrivals {
		fromProduce = append(fromProduce, a.at.Sub(a.sent))
		if acked, ok := b.acked[a.eventID]; ok {
			fromAck = append(fromAck, a.at.Sub(acked))
		}
		if a.at.After(last) {
			last = a.at
		}
	}
	return fromProduce, fromAck, last
}

// delivered is how many measured events have arrived.
func (b *bencher) delivered() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.arrivals)
}

// warmUp produces one event and waits for its delivery, so the measured
// run does not include the hub finding a topic it had not consumed yet
// (STREAMING_HUB_KAFKA_METADATA_REFRESH).
func (b *bencher) warmUp(ctx context.Context, p *events.Producer, subID string) error {
	id := events.NewEventID()
	b.mu.Lock()
	b.warmID = id
	b.mu.Unlock()
	sent := time.Now()
	produced := make(chan error, 1)
	p.Produce(ctx, id, sent, benchmark.Payload(b.opts.Size, sent), func(err error) { produced <- err })
	if err := p.Flush(ctx); err != nil {
		return err
	}
	if err := <-produced; err != nil {
		return cmdutil.WithCode(cmdutil.ExitUnavailable, fmt.Errorf("publish to %s: %w", p.Topic(), err))
	}
	fmt.Fprintf(b.opts.Factory.IOStreams.ErrOut, "Waiting for the hub to deliver a first event from %s...\n", p.Topic())
	deadline := time.NewTimer(b.opts.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case <-b.warm:
			return nil
		case <-deadline.C:
			return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("the hub delivered no event within %s: is it consuming %s (STREAMING_HUB_KAFKA_TOPICS) from these brokers?", b.opts.Timeout, p.Topic()))
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if !b.opts.readsRecords() {
				continue
			}
			found, err := b.urlWarmDelivered(ctx, subID, id, sent)
			if err != nil {
				return err
			}
			if found {
				return nil
			}
		}
	}
}

// measure produces the events and waits until all are delivered, the
// timeout passes or ctx ends.
func (b *bencher) measure(ctx context.Context, p *events.Producer, subID string) (timedOut bool, err error) {
	f := b.opts.Factory
	n := b.opts.Events
	b.mu.Lock()
	b.start = time.Now()
	start := b.start
	b.acked = make(map[string]time.Time, n)
	b.mu.Unlock()

	var urlSent map[string]time.Time
	if b.opts.readsRecords() {
		urlSent = make(map[string]time.Time, n)
	}
	produceCtx, stopProducing := context.WithCancelCause(ctx)
	defer stopProducing(nil)
	produced := make(chan error, 1)
	go func() {
		var once sync.Once
		fail := func(err error) {
			if err != nil {
				once.Do(func() { stopProducing(err) })
			}
		}
		acked := func(id string) func(error) {
			return func(err error) {
				if err == nil {
					b.ack(id, time.Now())
				}
				fail(err)
			}
		}
		for i := 0; i < n && produceCtx.Err() == nil; i++ {
			if b.opts.Rate > 0 {
				due := start.Add(time.Duration(float64(i) / b.opts.Rate * float64(time.Second)))
				if wait := time.Until(due); wait > 0 {
					select {
					case <-time.After(wait):
					case <-produceCtx.Done():
					}
				}
			}
			id, sent := events.NewEventID(), time.Now()
			if urlSent != nil {
				urlSent[id] = sent
			}
			p.Produce(produceCtx, id, sent, benchmark.Payload(b.opts.Size, sent), acked(id))
		}
		fail(p.Flush(produceCtx))
		produced <- context.Cause(produceCtx)
	}()

	progress := cmdutil.NewProgress(f, "Delivering", f.IOStreams.IsStderrTTY())
	defer progress.Done()
	deadline := time.NewTimer(b.opts.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	producing := true
	for {
		select {
		case <-b.done:
			progress.Set(int64(n), int64(n))
			return false, nil
		case err := <-produced:
			producing = false
			if err != nil && !errors.Is(err, context.Canceled) {
				return false, err
			}
		case <-deadline.C:
			return true, nil
		case <-ctx.Done():
			return false, ctx.Err()
		case <-tick.C:
			if urlSent != nil && !producing {
				if err := b.urlDelivered(ctx, subID, start, urlSent); err != nil {
					return false, err
				}
			}
			progress.Set(int64(b.delivered()), int64(n))
		}
	}
}

// result assembles the figures.
func (b *bencher) result(bare benchmark.Bare, timedOut bool, before, after cpuReading) benchmark.Result {
	b.mu.Lock()
	defer b.mu.Unlock()
	delivered := len(b.arrivals)
	fromProduce, fromAck, last := b.timings()
	elapsed := last.Sub(b.start)
	if delivered == 0 {
		elapsed = 0
	}
	rate := benchmark.Rate(delivered, elapsed)
	return benchmark.Result{
		Events: b.opts.Events, Delivered: delivered, Duplicates: b.dups, Rejected: b.rejected,
		SizeBytes: b.opts.Size, RateLimit: b.opts.Rate, LingerMS: float64(b.opts.Linger) / float64(time.Millisecond), TimedOut: timedOut,
		ElapsedSeconds: elapsed.Seconds(), DeliveriesPerSecond: rate,
		Latency:        benchmark.Summarize(fromProduce),
		LatencyFromAck: benchmark.Summarize(fromAck),
		Bare:           bare,
		Ratio:          benchmark.Ratio(rate, bare.RequestsPerSecond),
		CPU:            cpuPerDelivery(before, after, delivered),
	}
}

// newSecret is the signing secret the bench gives its subscription, so
// its receiver knows it before the hub's first probe.
func newSecret() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "bench_" + hex.EncodeToString(b), nil
}

// dialable turns a wildcard listen address into one the hub can dial on
// this machine.
func dialable(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return addr.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}
