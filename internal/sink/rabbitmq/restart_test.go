package rabbitmq_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/rabbitmq"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
	"github.com/hubctl/hubctl/internal/testutil/rabbitnode"
)

// Broker phases of the restart test, in order.
const (
	phaseUp       int32 = iota // before the restart
	phaseDown                  // Stop has returned: the node is gone
	phaseStarting              // Start has been called
	phaseBack                  // Start has returned: the node answers again
)

// restartAttempt is what one Deliver call did, and in which broker phases
// it began and ended.
type restartAttempt struct {
	event      int
	ok         bool
	err        string
	took       time.Duration
	begun, end int32
}

// TestDeliveriesSurviveBrokerRestart streams deliveries through one sink
// while its broker, a private node, restarts, the way dispatch drives a
// sink: workers make one Deliver per attempt and a failed attempt is
// retried later. Every event must end up in the durable queue (at least
// once), attempts made while the broker is down must fail within the
// attempt timeout, and the same sink must deliver again once the broker is
// back.
func TestDeliveriesSurviveBrokerRestart(t *testing.T) {
	const (
		events       = 300
		workers      = 8 // dispatch's default
		restartAfter = events / 3
		// A failed event is retried after firstRetry, doubling per failure
		// up to maxRetry: dispatch's backoff, at test speed.
		firstRetry     = 20 * time.Millisecond
		maxRetry       = 500 * time.Millisecond
		attemptTimeout = 2 * time.Second
		// timeoutSlack is how late past its timeout an attempt may return
		// on a loaded machine before it counts as hanging.
		timeoutSlack = 2 * time.Second
		// outageFailures is how many attempts must fail while the node
		// is down before it is started again.
		outageFailures = workers
		streamDeadline = 3 * time.Minute
		eventKey       = "order.created"
	)
	node := rabbitnode.Start(t)

	exchange := "hubctl-restart-" + uuid.NewString()
	queue := exchange
	setup := restartChannel(t, node.URL())
	// Durable, so that the restarted node still routes to the queue.
	if err := setup.ExchangeDeclare(exchange, amqp.ExchangeDirect, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := setup.QueueDeclare(queue, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := setup.QueueBind(queue, eventKey, exchange, false, nil); err != nil {
		t.Fatal(err)
	}

	var connects atomic.Int64 // TCP connections the sink made
	typ := rabbitmq.NewType(rabbitmq.Options{
		AllowPrivate: true, // the node is on loopback
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			var d net.Dialer
			conn, err := d.DialContext(ctx, network, address)
			if err == nil {
				connects.Add(1)
			}
			return conn, err
		},
	})
	s := sinktest.Open(t, typ, map[string]any{"url": node.URL(), "exchange": exchange})

	eventIDs := make([]string, events)
	for i := range eventIDs {
		eventIDs[i] = uuid.NewString()
	}
	published := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	var (
		phase       atomic.Int32
		mu          sync.Mutex
		attempts    []restartAttempt
		delivered   = make([]bool, events)
		failed      = make([]int, events) // failed attempts per event
		okCount     int
		outageFails int
		reachedStop = make(chan struct{}) // restartAfter events delivered
		outageSeen  = make(chan struct{}) // outageFailures failures while down
		allDone     = make(chan struct{})
	)
	// record notes an attempt and returns when to retry a failed one.
	record := func(a restartAttempt) (retryIn time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		attempts = append(attempts, a)
		if !a.ok {
			retryIn = min(firstRetry<<min(failed[a.event], 10), maxRetry)
			failed[a.event]++
		}
		if a.ok && !delivered[a.event] {
			delivered[a.event] = true
			okCount++
			if okCount == restartAfter {
				close(reachedStop)
			}
			if okCount == events {
				close(allDone)
			}
		}
		if !a.ok && a.begun == phaseDown && a.end == phaseDown {
			outageFails++
			if outageFails == outageFailures {
				close(outageSeen)
			}
		}
		return retryIn
	}

	ctx, cancel := context.WithTimeout(t.Context(), streamDeadline)
	defer cancel()
	// Every event is in exactly one place at a time: not yet released,
	// in this queue, with a worker, or waiting for its retry; so sends
	// never block. The last third is released only once the node is down,
	// so that however fast the first part goes, deliveries are attempted
	// during the outage and are still due when the node comes back.
	ready := make(chan int, events)
	releasedFirst := events - events/3
	for i := range releasedFirst {
		ready <- i
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				var event int
				select {
				case event = <-ready:
				case <-allDone:
					return
				case <-ctx.Done():
					return
				}
				begun := phase.Load()
				start := time.Now()
				out := s.Deliver(ctx, sink.Delivery{
					DeliveryID:    uuid.NewString(), // new for every attempt
					EventID:       eventIDs[event],
					EventKey:      eventKey,
					TenantID:      "tenant-restart",
					Source:        "hubctl/test",
					Type:          eventKey,
					Time:          published,
					SchemaVersion: "1",
					Payload:       fmt.Appendf(nil, `{"n":%d}`, event),
					Timeout:       attemptTimeout,
				})
				a := restartAttempt{event: event, ok: out.OK, err: out.Error, took: time.Since(start), begun: begun, end: phase.Load()}
				if retryIn := record(a); !out.OK {
					time.AfterFunc(retryIn, func() { ready <- event })
				}
			}
		})
	}
	stopWorkers := func() {
		cancel()
		wg.Wait()
	}

	waitFor := func(what string, c <-chan struct{}) {
		t.Helper()
		select {
		case <-c:
		case <-ctx.Done():
			stopWorkers()
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("gave up waiting for %s: %d of %d events delivered, %d attempts, %d failed while the node was down",
				what, okCount, events, len(attempts), outageFails)
		}
	}

	waitFor(fmt.Sprintf("%d deliveries before the restart", restartAfter), reachedStop)
	if err := node.Stop(); err != nil {
		stopWorkers()
		t.Fatal(err)
	}
	phase.Store(phaseDown)
	outageBegan := time.Now()
	for i := releasedFirst; i < events; i++ {
		ready <- i
	}
	waitFor("failed attempts while the node was down", outageSeen)
	phase.Store(phaseStarting)
	if err := node.Start(); err != nil {
		stopWorkers()
		t.Fatal(err)
	}
	phase.Store(phaseBack)
	backAt := time.Now()
	waitFor("every event to be delivered after the restart", allDone)
	stopWorkers()

	var (
		failures, okAfterOutage, okBeforeRestart int
		maxTook                                  time.Duration
		failureReasons                           = map[string]int{}
	)
	for _, a := range attempts {
		maxTook = max(maxTook, a.took)
		if a.took > attemptTimeout+timeoutSlack {
			t.Errorf("an attempt on event %d took %s, past its %s timeout (ok=%v, %q)", a.event, a.took, attemptTimeout, a.ok, a.err)
		}
		switch {
		case a.ok && a.begun == phaseDown && a.end == phaseDown:
			t.Errorf("event %d was reported delivered by an attempt made while the node was down", a.event)
		case a.ok && a.begun >= phaseDown:
			okAfterOutage++
		case a.ok && a.end == phaseUp:
			okBeforeRestart++
		case !a.ok:
			failures++
			failureReasons[a.err]++
			if a.err == "" {
				t.Errorf("a failed attempt on event %d has no reason", a.event)
			}
		}
	}
	if okAfterOutage == 0 {
		t.Error("no delivery succeeded after the node came back: the sink did not reconnect")
	}
	if connects.Load() < 2 {
		t.Errorf("the sink connected %d times; it must have connected again after the restart", connects.Load())
	}

	// The queue is the ground truth: every event at least once.
	drain := restartChannel(t, node.URL())
	seen := map[string]int{}
	total := 0
	for {
		msg, ok, err := drain.Get(queue, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		total++
		seen[msg.MessageId]++
	}
	missing := 0
	for i, id := range eventIDs {
		if seen[id] == 0 {
			missing++
			if missing <= 5 {
				t.Errorf("event %d (%s) is not in the queue", i, id)
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d events lost across the restart", missing, events)
	}
	if len(seen) > events {
		t.Errorf("the queue holds %d distinct message ids, more than the %d events published", len(seen), events)
	}
	t.Logf("%d events, %d attempts (%d failed), %d delivered before the restart, %d after it; "+
		"outage %s until Start returned; queue: %d messages, %d distinct, %d duplicates; "+
		"slowest attempt %s; sink connections %d; failure reasons %v",
		events, len(attempts), failures, okBeforeRestart, okAfterOutage,
		backAt.Sub(outageBegan).Round(time.Millisecond), total, len(seen), total-len(seen),
		maxTook.Round(time.Millisecond), connects.Load(), failureReasons)
}

// restartChannel opens a channel on the node outside the sink under test,
// closed at the end of the test.
func restartChannel(t *testing.T, url string) *amqp.Channel {
	t.Helper()
	conn, err := amqp.DialConfig(url, amqp.Config{Dial: amqp.DefaultDial(5 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}
