//go:build linux

package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/testutil/wait"
)

// verdict is what a scenario's checks found once the load stopped and the
// hub caught up.
type verdict struct {
	valid, invalid int // produced and acknowledged by the broker
	inbox          int // produced valid events found in the inbox
	extra          int // inbox events nobody produced
	quarantined    int
	delivered      int // produced events delivered at least once
	duplicates     int // deliveries beyond the first
	perKill        []int
	unattributed   int // duplicates no kill explains
	forged         int // deliveries whose signature did not verify
	pulled         int // events the pull follower read exactly once
	pulledTwice    int
	outOfOrder     int
	jobs           map[string]int
	recovered      int // jobs whose lease expired and were taken up again
}

// settle stops the load, waits for the hub to catch up and checks the
// promises; kills are the moments of this scenario's SIGKILLs, to which
// duplicate deliveries are attributed.
func (w *world) settle(kills []time.Time) verdict {
	w.t.Helper()
	w.stopLoad()
	valid, invalid := w.producerResult()
	v := verdict{valid: len(valid), invalid: invalid, perKill: make([]int, len(kills))}
	want := make(map[string]bool, len(valid))
	for _, id := range valid {
		want[id] = true
	}

	w.waitFor("every produced event in the inbox", func() bool {
		stored := w.inboxIDs()
		v.inbox, v.extra = 0, 0
		for id := range stored {
			if want[id] {
				v.inbox++
			} else {
				v.extra++
			}
		}
		return v.inbox == len(valid)
	})
	// The inbox's unique key makes a second row of an event impossible;
	// what can go wrong is an event missing, or one nobody produced.
	if v.extra > 0 {
		w.t.Errorf("the inbox holds %d events nobody produced", v.extra)
	}
	v.quarantined = w.count(`SELECT count(*) FROM quarantine`)
	if v.quarantined < v.invalid {
		w.t.Errorf("%d records quarantined, want at least the %d malformed ones produced", v.quarantined, v.invalid)
	}

	var arrivals map[string][]time.Time
	w.waitFor("every produced event delivered", func() bool {
		arrivals, v.forged = w.receiver.snapshot()
		v.delivered = 0
		for _, id := range valid {
			if len(arrivals[id]) > 0 {
				v.delivered++
			}
		}
		return v.delivered == len(valid)
	})
	var seen map[string]int
	w.waitFor("every produced event pulled", func() bool {
		seen, v.outOfOrder = w.puller.snapshot()
		n := 0
		for _, id := range valid {
			if seen[id] > 0 {
				n++
			}
		}
		return n == len(valid)
	})
	w.puller.stop()
	for id, n := range seen {
		switch {
		case !want[id]:
			w.t.Errorf("the pull stream carried %s, which nobody produced", id)
		case n == 1:
			v.pulled++
		default:
			v.pulledTwice++
		}
	}
	if v.pulledTwice > 0 || v.outOfOrder > 0 {
		w.t.Errorf("pull stream: %d events read more than once, %d out of seq order", v.pulledTwice, v.outOfOrder)
	}

	// Jobs killed mid-attempt stay in flight until their lease expires;
	// after that, and a reap, none may be left.
	var leaseEnd *time.Time
	if err := w.pool.QueryRow(context.Background(), `SELECT max(lease_until) FROM delivery_jobs WHERE state = 'in_flight'`).Scan(&leaseEnd); err != nil {
		w.t.Fatal(err)
	}
	deadline := time.Now().Add(patience)
	if leaseEnd != nil {
		deadline = leaseEnd.Add(2*reapInterval + 5*time.Second)
	}
	for {
		v.jobs = w.jobStates()
		if v.jobs["in_flight"] == 0 && v.jobs["pending"] == 0 {
			break
		}
		if time.Now().After(deadline) {
			w.t.Errorf("jobs not settled once every lease could have expired: %v", v.jobs)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := v.jobs["succeeded"]; n != len(valid) || len(v.jobs) != 1 {
		w.t.Errorf("jobs by state %v, want %d succeeded and nothing else", v.jobs, len(valid))
	}
	v.recovered = w.count(`SELECT count(*) FROM delivery_jobs WHERE recoveries > 0`)

	// Counted last: a job whose attempt a kill interrupted is delivered
	// again only once its lease has expired.
	arrivals, v.forged = w.receiver.snapshot()
	if v.forged > 0 {
		w.t.Errorf("%d deliveries failed signature verification", v.forged)
	}
	for _, times := range arrivals {
		for _, at := range times[1:] {
			v.duplicates++
			// The kill that explains a redelivery is the first one after
			// the first delivery: it lost that attempt's result, and the
			// redelivery waited for the lease to expire.
			i := -1
			for k, kill := range kills {
				if kill.After(times[0]) && !kill.After(at) {
					i = k
					break
				}
			}
			if i >= 0 {
				v.perKill[i]++
			} else {
				v.unattributed++
			}
		}
	}

	return v
}

func (w *world) producerResult() ([]string, int) {
	// stopLoad has run: read what the producer had acknowledged.
	return w.acked, w.ackedInvalid
}

func (w *world) inboxIDs() map[string]bool {
	w.t.Helper()
	// The events produced to Kafka: not the hub's own operational events.
	rows, err := w.pool.Query(context.Background(), `SELECT id::text FROM events WHERE source <> 'hubctl'`)
	if err != nil {
		return nil // the database may still be coming back
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil
	}
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}

// jobStates counts the jobs of the world's webhook subscription by state.
func (w *world) jobStates() map[string]int {
	w.t.Helper()
	return w.jobStatesOf(w.sub)
}

func (w *world) jobStatesOf(sub string) map[string]int {
	w.t.Helper()
	rows, err := w.pool.Query(context.Background(), `SELECT state::text, count(*)::int FROM delivery_jobs WHERE subscription_id = $1 GROUP BY 1`, sub)
	if err != nil {
		w.t.Fatal(err)
	}
	out := make(map[string]int)
	var state string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&state, &n}, func() error { out[state] = n; return nil }); err != nil {
		w.t.Fatal(err)
	}
	return out
}

func (w *world) waitFor(what string, cond func() bool) {
	w.t.Helper()
	wait.Poll{Patience: patience, Interval: 200 * time.Millisecond}.Until(w.t, what, cond)
}

// report is a scenario's printed summary.
type report struct {
	b strings.Builder
}

func (r *report) line(format string, args ...any) { fmt.Fprintf(&r.b, format+"\n", args...) }

func (r *report) verdict(v verdict) {
	r.line("  produced   %d valid + %d malformed events", v.valid, v.invalid)
	r.line("  inbox      %d/%d exactly once, %d unknown; %d quarantined", v.inbox, v.valid, v.extra, v.quarantined)
	r.line("  push       %d/%d delivered at least once, %d duplicates (%d not explained by a kill), %d bad signatures",
		v.delivered, v.valid, v.duplicates, v.unattributed, v.forged)
	r.line("  pull       %d/%d exactly once, %d twice, %d out of seq order", v.pulled, v.valid, v.pulledTwice, v.outOfOrder)
	states := make([]string, 0, len(v.jobs))
	for s, n := range v.jobs {
		states = append(states, fmt.Sprintf("%s %d", s, n))
	}
	slices.Sort(states)
	r.line("  jobs       %s; in_flight %d once leases could have expired; %d recovered from expired leases",
		strings.Join(states, ", "), v.jobs["in_flight"], v.recovered)
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }
