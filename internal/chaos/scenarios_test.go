//go:build linux

package chaos

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/devenv"
)

// staticID is the instance id of the scenarios' hub, as hubctl dev and a
// StatefulSet give one.
const staticID = "hub-0"

// moment is when a SIGKILL lands.
type moment int

const (
	duringIngest moment = iota // an ingest transaction has written and not committed
	midAttempt                 // a webhook request is in flight
	anyMoment
)

func (m moment) String() string {
	return [...]string{"ingest transaction", "attempt in flight", "random moment"}[m]
}

// awaitMoment waits, briefly, for m; it reports whether m was caught (else
// the kill lands wherever the wait ended).
func (w *world) awaitMoment(m moment) bool {
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		switch m {
		case duringIngest:
			if w.inIngestTransaction() {
				return true
			}
		case midAttempt:
			if w.receiver.inflight.Load() > 0 {
				return true
			}
		default:
			time.Sleep(time.Duration(rand.IntN(1000)) * time.Millisecond)
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// TestChaosSIGKILL kills `hubctl serve` under load, at a moment chosen in
// turn: inside an ingest transaction, with a webhook attempt in flight, or
// at random; restarts it at once, and checks that it recovers within the
// bound and that nothing is lost or stored twice.
func TestChaosSIGKILL(t *testing.T) {
	prelude(t)
	n := rounds(t)
	w := newWorld(t, worldOptions{instanceID: staticID})
	var r report
	r.line("scenario SIGKILL: %d rounds, static member %s", n, staticID)
	r.line("  round  kill moment                  ready   ingesting  delivering")
	var kills []time.Time
	var worst recovery
	for i := range n {
		time.Sleep(500*time.Millisecond + time.Duration(rand.IntN(1000))*time.Millisecond)
		m := moment(i % 3)
		caught := w.awaitMoment(m)
		kills = append(kills, time.Now())
		w.kill()
		rec := w.watchRecovery(w.restart())
		if rec.ready > restartBound || rec.ingested > restartBound {
			t.Errorf("round %d: ready after %v and ingesting after %v; the bound is %v", i+1, rec.ready, rec.ingested, restartBound)
		}
		worst = recovery{max(worst.ready, rec.ready), max(worst.ingested, rec.ingested), max(worst.delivered, rec.delivered)}
		label := m.String()
		if !caught {
			label += " (missed)"
		}
		r.line("  %5d  %-27s  %6s  %9s  %10s", i+1, label, seconds(rec.ready), seconds(rec.ingested), seconds(rec.delivered))
	}
	v := w.settle(kills)
	r.line("  worst  %-27s  %6s  %9s  %10s", "", seconds(worst.ready), seconds(worst.ingested), seconds(worst.delivered))
	r.line("  duplicates per kill %v", v.perKill)
	r.verdict(v)
	t.Log("\n" + r.b.String())
}

// TestChaosPostgresCrash crashes the hub's database with pg_ctl -m
// immediate mid-stream, keeps it down for a few seconds, and starts it
// again: the hub keeps running, retries, and loses nothing.
func TestChaosPostgresCrash(t *testing.T) {
	prelude(t)
	pg, dataDir := privatePostgres(t)
	current := pg
	t.Cleanup(func() { _ = current.Stop(context.Background()) })
	w := newWorld(t, worldOptions{instanceID: staticID, pg: pg})
	var r report
	r.line("scenario PostgreSQL crash: pg_ctl stop -m immediate, down 3s, started again")

	time.Sleep(2 * time.Second)
	if err := pg.StopImmediate(t.Context()); err != nil {
		t.Fatal(err)
	}
	_ = pg.Stop(context.Background()) // its runtime files
	time.Sleep(3 * time.Second)
	restarted := time.Now()
	again, err := devenv.StartPostgres(t.Context(), devenv.PostgresOptions{DataDir: dataDir, Port: pg.Port()})
	if err != nil {
		t.Fatal(err)
	}
	current = again
	startTook := time.Since(restarted)
	rec := w.watchRecovery(restarted)
	select {
	case err := <-w.hubExit:
		t.Fatalf("the hub exited while its database was down: %v", err)
	default:
	}
	r.line("  PostgreSQL back in %s (crash recovery); from its restart: ingesting %s, delivering %s",
		seconds(startTook), seconds(rec.ingested), seconds(rec.delivered))
	time.Sleep(time.Second)
	r.verdict(w.settle(nil))
	t.Log("\n" + r.b.String())
}

// TestChaosBrokerRestart closes the Kafka broker mid-stream (its state
// kept in its data directory) and opens it again on the same port.
func TestChaosBrokerRestart(t *testing.T) {
	prelude(t)
	w := newWorld(t, worldOptions{instanceID: staticID})
	var r report
	r.line("scenario Kafka broker restart: closed, down 2s, reopened from its data directory")

	time.Sleep(2 * time.Second)
	w.kafka.Close()
	time.Sleep(2 * time.Second)
	reopened := time.Now()
	var err error
	if w.kafka, err = devenv.StartKafka(w.kafkaOpt); err != nil {
		t.Fatal(err)
	}
	rec := w.watchRecovery(reopened)
	r.line("  after the broker reopened: ready %s, ingesting %s, delivering %s", seconds(rec.ready), seconds(rec.ingested), seconds(rec.delivered))
	time.Sleep(time.Second)
	r.verdict(w.settle(nil))
	t.Log("\n" + r.b.String())
}

// TestChaosReceiverHangs makes the webhook receiver hang (every request
// waits past the attempt timeout) for a few seconds, then recover.
func TestChaosReceiverHangs(t *testing.T) {
	prelude(t)
	w := newWorld(t, worldOptions{instanceID: staticID})
	var r report
	r.line("scenario receiver hangs for 4s (attempt timeout %s), then recovers", attemptTimeout)

	time.Sleep(2 * time.Second)
	w.receiver.hang()
	time.Sleep(4 * time.Second)
	recovered := time.Now()
	w.receiver.recover()
	rec := w.watchRecovery(recovered)
	r.line("  after the receiver recovered: delivering %s", seconds(rec.delivered))
	time.Sleep(time.Second)
	r.verdict(w.settle(nil))
	t.Log("\n" + r.b.String())
}

// TestRestartWithinTheBound: after SIGKILL and an immediate restart, the
// hub is ready and ingesting within 10s, as a static member (its restart
// takes the partitions back without a rebalance) and as a dynamic one (the
// dead member's session, 10s by default, runs out first).
func TestRestartWithinTheBound(t *testing.T) {
	prelude(t)
	for _, tc := range []struct{ name, id string }{{"static member", staticID}, {"dynamic member", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			if !long(t) {
				t.Parallel()
			}
			// The session outlasts any bound: a restart that waited for the
			// dead member's session to end, the failure this test is for,
			// takes over 30s whatever the machine's load.
			w := newWorld(t, worldOptions{instanceID: tc.id, sessionTimeout: 30 * time.Second})
			time.Sleep(time.Second)
			w.kill()
			rec := w.watchRecovery(w.restart())
			// The documented bound holds on a quiet machine, which make chaos
			// runs the scenarios on one at a time. make test runs them side by
			// side with the rest of the suite on CI's two cores, where the
			// process's start and the group's join stretch by seconds (a
			// dynamic member took 10.6s there, 7s quiet).
			bound := restartBound
			if !long(t) {
				bound += loadAllowance
			}
			if rec.ready > bound || rec.ingested > bound {
				t.Errorf("ready after %v, ingesting after %v; the bound is %v", rec.ready, rec.ingested, bound)
			}
			t.Logf("restart as a %s: ready %s, ingesting %s, delivering %s", tc.name, seconds(rec.ready), seconds(rec.ingested), seconds(rec.delivered))
		})
	}
}
