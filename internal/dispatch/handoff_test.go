package dispatch

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	dto "github.com/prometheus/client_model/go"

	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
)

func waitForHandoffOpen(t *testing.T, d *Dispatcher) {
	t.Helper()
	waitFor(t, "the dispatcher to take handed jobs", func() bool {
		d.claimMu.Lock()
		defer d.claimMu.Unlock()
		return d.handoffOpen
	})
}

func TestIngestHandsFirstAttemptsStraightToItsDispatcher(t *testing.T) {
	e := newEnv(t)
	kafka := kafkatest.New(t, testTopic)
	rc := newReceiver(t, nil)
	sub, _ := e.webhookSub("acme", rc.URL)
	// No idle polling: a claim that happened to be running when ingest
	// reserves would rightly take the room a handover needs, and whether
	// one was would be a matter of timing. Claims start only when woken.
	d, _ := e.start(func(o *Options) { o.Dispatch.IdleInterval = time.Hour })
	waitForHandoffOpen(t, d)

	startIngest(t, e.store, kafka.Brokers(), d)

	// One event at a time, each after the last was delivered: the tenant
	// never has a due job waiting, so every first attempt is handed over.
	const events = 10
	ctx := context.Background()
	for i := range events {
		// A claim still holding its room when ingest reserves takes it:
		// the claims of the start, or those the last batch's notification
		// woke, must be done.
		waitFor(t, "no claim under way", func() bool { return idle(d) })
		kafka.Produce(t, ctx, testTopic, cloudEvent("acme", uuid.Must(uuid.NewV7()).String(), []byte(`{"n":1}`)))
		waitFor(t, "the delivery of the event just produced", func() bool {
			return len(rc.Requests()) == i+1 && e.jobStates(sub)["succeeded"] == i+1
		})
	}
	waitFor(t, "every delivery to be recorded", func() bool { return e.jobStates(sub)["succeeded"] == events })
	var handed dto.Metric
	if err := d.metrics.handedOver.Write(&handed); err != nil {
		t.Fatal(err)
	}
	if n := handed.GetCounter().GetValue(); n != events {
		t.Errorf("jobs handed over = %v, want all %d: none should have waited for a claim", n, events)
	}
	if n := e.count(`SELECT count(*) FROM all_delivery_attempts WHERE attempt = 1 AND outcome = 'succeeded'`); n != events {
		t.Errorf("first attempts recorded = %d, want %d", n, events)
	}
	if n := e.count(`SELECT count(*) FROM delivery_jobs WHERE recoveries > 0 OR attempts <> 1`); n != 0 {
		t.Errorf("%d handed jobs were recovered or attempted other than once", n)
	}
}

func TestHandoffReservesWithinTheClaimMarkAndClosesAtShutdown(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	sub, _ := e.webhookSub("acme", rc.URL)

	d, err := New(e.options(e.subs))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.ReserveHandoff(1); ok {
		t.Fatal("a dispatcher that is not running took a reservation")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitForHandoffOpen(t, d)

	room := handoffRoom(d.cfg.Workers, d.cfg.ClaimBatch)
	_, ok := d.ReserveHandoff(room + 1)
	if ok {
		t.Errorf("reserved %d jobs past the claim mark of %d", room+1, room)
	}
	// Claims reserve room of their own as they start (a whole batch each
	// until the pace has measured an idle queue), so room comes and goes.
	var lease queue.HandoffLease
	waitFor(t, "room for one handed job", func() bool {
		lease, ok = d.ReserveHandoff(1)
		return ok
	})
	if lease.Owner != d.Owner() || lease.Margin != d.margin+queueAllowance {
		t.Fatalf("ReserveHandoff(1) = %+v; want this dispatcher's lease", lease)
	}
	if _, ok := d.ReserveHandoff(room); ok {
		t.Error("a reservation went past the room already reserved")
	}
	d.CancelHandoff(1)

	// A reservation made before shutdown whose batch commits after it: the
	// job is handed back, due at once, instead of waiting for its lease.
	waitFor(t, "room for one handed job after the cancel", func() bool {
		_, ok = d.ReserveHandoff(1)
		return ok
	})
	e.insertJobsDue("acme", sub, 1, time.Hour) // not due: no claim takes it
	var job queue.ClaimedJob
	if err := e.store.Pool.QueryRow(context.Background(), `
UPDATE delivery_jobs SET state = 'in_flight', lease_owner = $2, lease_until = now() + interval '1 minute'
WHERE subscription_id = $1 RETURNING id, tenant_id, subscription_id, lease_until`, sub, d.Owner()).
		Scan(&job.ID, &job.TenantID, &job.SubscriptionID, &job.LeaseUntil); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	done <- nil // for the cleanup
	if _, ok := d.ReserveHandoff(1); ok {
		t.Error("a stopped dispatcher took a reservation")
	}
	d.TakeHandoff([]queue.ClaimedJob{job})
	if states := e.jobStates(sub); states["pending"] != 1 {
		t.Errorf("job handed after shutdown: states %v, want it pending again", states)
	}
	if n := e.count(`SELECT count(*) FROM delivery_jobs WHERE lease_owner IS NULL AND recoveries = 0`); n != 1 {
		t.Errorf("the job handed back kept its lease or counted a recovery")
	}
	if len(rc.Requests()) != 0 {
		t.Errorf("%d deliveries from a stopped dispatcher", len(rc.Requests()))
	}
}

// idle reports that d has no claim under way and nothing queued or
// reserved: a handover now finds all its room.
func idle(d *Dispatcher) bool {
	d.claimMu.Lock()
	defer d.claimMu.Unlock()
	return d.reserved == 0 && d.queuedForRoom() == 0
}
