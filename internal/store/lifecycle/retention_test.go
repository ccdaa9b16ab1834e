package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
)

// v7At is a canonical UUIDv7 of the millisecond t, told apart by n.
func v7At(t time.Time, n int) string {
	ms := uint64(t.UnixMilli())
	return fmt.Sprintf("%08x-%04x-7000-8000-%012x", ms>>16, ms&0xffff, n)
}

// simulation is a hub's storage driven through the store with an
// injected clock: ingest, dispatch, a pull reader and retention, one
// simulated day at a time.
type simulation struct {
	t      *testing.T
	st     *testStore
	policy RetentionPolicy
	start  time.Time
	offset int64
	serial int
	push   uuid.UUID
	pull   uuid.UUID
	// sent remembers the records ingested, by day, to send copies later.
	sent map[int][]queue.IngestRecord
}

func (s *simulation) day(d int) time.Time { return s.start.Add(time.Duration(d)*day + time.Hour) }

// ingest stores n new events received at `at`, in batches.
func (s *simulation) ingest(d, n int, at time.Time) {
	s.t.Helper()
	payload := make([]byte, 1024)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	for n > 0 {
		size := min(n, 250)
		var records []queue.IngestRecord
		for range size {
			s.serial++
			r := accepted(s.t, s.offset, "acme", v7At(at, s.serial), payload)
			records = append(records, r)
			s.sent[d] = append(s.sent[d], r)
			s.offset++
		}
		b := batchOf(0, s.offset, records...)
		b.ReceivedAt = at
		res := writeBatch(s.t, s.st, b)
		if res.Jobs != size || res.PullEntries != size {
			s.t.Fatalf("day %d: a batch of %d events made %d jobs and %d pull entries", d, size, res.Jobs, res.PullEntries)
		}
		n -= size
	}
}

// resend sends a copy of a record ingested earlier, at a new offset, and
// returns its verdict.
func (s *simulation) resend(r queue.IngestRecord, at time.Time) event.Verdict {
	s.t.Helper()
	r.Offset = s.offset
	s.offset++
	b := batchOf(0, s.offset, r)
	b.ReceivedAt = at
	return writeBatch(s.t, s.st, b).Verdicts[0]
}

// dispatch claims every job due at `at` and lets decide say what becomes
// of each: nil for a success, else the failed attempt's retry verdict.
func (s *simulation) dispatch(at time.Time, decide func(queue.ClaimedJob) *queue.Retry) {
	s.t.Helper()
	ctx := context.Background()
	after := ""
	for {
		res, err := s.st.Claim(ctx, queue.ClaimRequest{Owner: "sim", Limit: 500, Now: at, After: after, LeaseMargin: time.Minute})
		if err != nil {
			s.t.Fatalf("claim at %s: %v", at, err)
		}
		if res.Orphaned > 0 {
			s.t.Fatalf("claim at %s found %d jobs whose event retention removed", at, res.Orphaned)
		}
		if len(res.Jobs) == 0 {
			return
		}
		after = res.Resume
		var ok []queue.Attempt
		for _, j := range res.Jobs {
			if len(j.Event.Payload) != 1024 {
				s.t.Fatalf("job %s claimed with a payload of %d bytes", j.ID, len(j.Event.Payload))
			}
			a := queue.Attempt{JobID: j.ID, SubscriptionID: j.SubscriptionID, Owner: "sim", DeliveryID: uuid.Must(uuid.NewV7()),
				StartedAt: at, Duration: 20 * time.Millisecond, OK: true, StatusCode: 200}
			if retry := decide(j); retry != nil {
				a.OK, a.StatusCode, a.Error, a.Retry = false, 503, "unavailable", *retry
				if _, err := s.st.Complete(ctx, a, noAutoDisable); err != nil {
					s.t.Fatalf("record a failure: %v", err)
				}
				continue
			}
			ok = append(ok, a)
		}
		if _, err := s.st.CompleteSuccesses(ctx, ok); err != nil {
			s.t.Fatalf("record %d successes: %v", len(ok), err)
		}
	}
}

// read reads the pull subscription to its end and returns what it got.
func (s *simulation) read() (seqs []int64, expired []bool) {
	s.t.Helper()
	for {
		res, err := s.st.ReadPull(context.Background(), queue.PullQuery{TenantID: "acme", SubscriptionID: s.pull, Limit: 500})
		if err != nil {
			s.t.Fatalf("read pull: %v", err)
		}
		expired = append(expired, res.EventsExpired)
		for _, e := range res.Events {
			seqs = append(seqs, e.Seq)
		}
		if len(res.Events) < 500 {
			return seqs, expired
		}
	}
}

func (s *simulation) prune(at time.Time) PruneReport {
	s.t.Helper()
	var rep PruneReport
	err := s.st.WithRetentionLock(context.Background(), func() error {
		if err := s.st.EnsurePartitions(context.Background(), at); err != nil {
			return err
		}
		var err error
		rep, err = s.st.Prune(context.Background(), at, s.policy, false)
		return err
	})
	if err != nil {
		s.t.Fatalf("prune at %s: %v", at, err)
	}
	return rep
}

func (s *simulation) storageBytes(at time.Time) int64 {
	s.t.Helper()
	status, err := s.st.StorageStatus(context.Background(), at, s.policy)
	if err != nil {
		s.t.Fatal(err)
	}
	var total int64
	for _, ts := range status.Tables {
		total += ts.Bytes
	}
	return total
}

func (s *simulation) count(sql string, args ...any) int64 {
	s.t.Helper()
	return queryCount(s.t, s.st, sql, args...)
}

// TestThirtyDaysOfTrafficStayBounded runs 30 simulated days of steady
// traffic with retention: storage levels off once retention starts
// cutting, nothing that is still needed goes (a job retrying for 20 days,
// dead letters, unread pull entries within retention), a reader that
// fell behind is told, and consume-once holds across day boundaries and
// prunes.
func TestThirtyDaysOfTrafficStayBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := ingestStore(t)
	sim := &simulation{t: t, st: st, start: pg.DayStart(time.Now()), sent: map[int][]queue.IngestRecord{},
		policy: RetentionPolicy{Events: 7 * day, Deliveries: 7 * day, Quarantine: 7 * day}}
	sim.push = uuid.MustParse(addTestSubscription(t, st, "acme", "webhook", []string{"transaction.posted"}))
	sim.pull = uuid.MustParse(addTestSubscription(t, st, "acme", "pull", []string{"transaction.posted"}))
	if _, err := st.Pool.Exec(ctx, `INSERT INTO pull_cursors (subscription_id) VALUES ($1)`, sim.pull); err != nil {
		t.Fatal(err)
	}

	const perDay = 500
	var (
		sizes                       = make([]int64, 30)
		straggler                   uuid.UUID // fails on day 2, next attempt 20 days later
		replayed, expiring          uuid.UUID // dead letters of day 3
		stragglerEvent, stragglerAt = queue.IngestRecord{}, time.Time{}
		stragglerDone               bool
		resumed                     []int64
		resumedExpired              []bool
		extra                       []time.Time // copies accepted as new events
	)
	for d := range 30 {
		now := sim.day(d)
		rep := sim.prune(now)
		for _, r := range rep.Removals {
			if d < 8 && r.Rows > 0 {
				t.Errorf("day %d: retention removed %+v before anything expired", d, r)
			}
		}
		sim.ingest(d, perDay, now.Add(time.Minute))
		q := quarantined(sim.offset, event.ReasonInvalidTime)
		sim.offset++
		qb := batchOf(0, sim.offset, q)
		qb.ReceivedAt = now
		writeBatch(t, st, qb)

		sim.dispatch(now.Add(time.Hour), func(j queue.ClaimedJob) *queue.Retry {
			switch {
			case d == 2 && straggler == uuid.Nil:
				straggler, stragglerAt = j.ID, now
				for _, r := range sim.sent[2] {
					if r.Event.ID == j.Event.ID {
						stragglerEvent = r
					}
				}
				return &queue.Retry{At: now.Add(20 * day)}
			case d == 3 && replayed == uuid.Nil:
				replayed = j.ID
				return &queue.Retry{Exhausted: true}
			case d == 3 && expiring == uuid.Nil:
				expiring = j.ID
				return &queue.Retry{Exhausted: true}
			case j.ID == straggler:
				stragglerDone = true
			}
			return nil
		})

		// The reader keeps up for ten days, then stops; it comes back on
		// day 25, long after retention took what it had not read.
		switch {
		case d < 10:
			if _, expired := sim.read(); expired[0] {
				t.Errorf("day %d: a reader that keeps up was told events expired", d)
			}
		case d == 25:
			resumed, resumedExpired = sim.read()
		}

		// Nothing within retention is ever removed: every event received
		// in the last 7 days is there with its pull entry.
		window := now.Add(-sim.policy.Events)
		wantRecent := int64(perDay * min(d+1, 8)) // days d-7 to d
		for _, at := range extra {
			if at.After(window) {
				wantRecent++
			}
		}
		if got := sim.count(`SELECT count(*) FROM events WHERE received_at > $1`, window); got != wantRecent {
			t.Errorf("day %d: %d events received in the last 7 days are stored, want %d", d, got, wantRecent)
		}
		if got := sim.count(`SELECT count(*) FROM pull_entries p JOIN events e ON e.seq = p.event_seq WHERE e.received_at > $1`, window); got != wantRecent {
			t.Errorf("day %d: %d pull entries of the last 7 days are stored, want %d", d, got, wantRecent)
		}
		// The retrying job keeps its event however old.
		if straggler != uuid.Nil && !stragglerDone {
			if got := sim.count(`SELECT count(*) FROM delivery_jobs j JOIN events e ON e.seq = j.event_seq WHERE j.id = $1`, straggler); got != 1 {
				t.Errorf("day %d: the job retrying since day 2 lost its event", d)
			}
		}

		switch d {
		case 4:
			// A copy of yesterday's event, across the day boundary.
			if v := sim.resend(sim.sent[3][10], now.Add(2*time.Hour)); v.Reason != event.ReasonDuplicate {
				t.Errorf("a copy of an event of the day before is %v, want a duplicate", v)
			}
		case 9:
			// Retention has dropped days 0 and 1 by now: a copy of a
			// retained event is still a duplicate, also of one in the
			// pinned partition of day 2.
			if v := sim.resend(sim.sent[4][10], now.Add(2*time.Hour)); v.Reason != event.ReasonDuplicate {
				t.Errorf("a copy of a retained event after a prune is %v, want a duplicate", v)
			}
			if v := sim.resend(stragglerEvent, now.Add(2*time.Hour)); v.Reason != event.ReasonDuplicate {
				t.Errorf("a copy of the straggler's event is %v, want a duplicate", v)
			}
			// Both dead letters are listed with their events; one is
			// replayed and delivered.
			letters, _, err := st.ListDeadLetters(ctx, catalog.DeadLetterQuery{DeadLetterFilter: catalog.DeadLetterFilter{TenantID: "acme"}, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(letters) != 2 || letters[0].EventID == "" || letters[1].EventID == "" {
				t.Errorf("day 9: dead letters %+v, want both of day 3 with their events", letters)
			}
			res, err := st.ReplayDeadLetters(ctx, catalog.DeadLetterFilter{TenantID: "acme", IDs: []uuid.UUID{replayed}}, now, false)
			if err != nil || res.Replayed != 1 {
				t.Fatalf("replay: %+v %v", res, err)
			}
			sim.dispatch(now.Add(2*time.Hour), func(queue.ClaimedJob) *queue.Retry { return nil })
			if got := readJob(t, st, replayed).State; got != pg.JobSucceeded {
				t.Errorf("the replayed dead letter is %s, want succeeded", got)
			}
		case 12:
			// The dead letter left alone is past its deliveries'
			// retention, but its day's partition also holds the one
			// replayed on day 9, finished within retention: the whole
			// day stays, with the event it pins.
			if got := sim.count(`SELECT count(*) FROM delivery_jobs j JOIN events e ON e.seq = j.event_seq WHERE j.id = $1`, expiring); got != 1 {
				t.Errorf("day 12: the dead letter of day 3 went with the job replayed on day 9 still within retention")
			}
			if !slices.ContainsFunc(rep.Kept, func(k Kept) bool { return k.Table == TableDeliveryJobs }) {
				t.Errorf("day 12: the prune does not say why it kept day 3's jobs: %+v", rep.Kept)
			}
			// A copy of an event whose partition is gone is no longer
			// known: a new event.
			if v := sim.resend(sim.sent[0][10], now.Add(2*time.Hour)); v.Kind != event.Accept {
				t.Errorf("a copy of an event retention removed is %v, want accepted as new", v)
			}
			extra = append(extra, now.Add(2*time.Hour))
			sim.dispatch(now.Add(3*time.Hour), func(queue.ClaimedJob) *queue.Retry { return nil })
		case 17:
			// A week after the replayed job finished, day 3 goes, the
			// dead letter left alone and its event with it.
			if got := sim.count(`SELECT count(*) FROM delivery_jobs WHERE id = ANY($1)`, []uuid.UUID{expiring, replayed}); got != 0 {
				t.Errorf("day 17: %d of day 3's jobs are still kept a week after the last of them finished", got)
			}
		}
		// A simulated day is long enough for autovacuum to pass over the
		// tables whose rows are updated (jobs, cursors); without it the
		// dead versions of finished jobs would be counted as growth.
		if _, err := st.Pool.Exec(ctx, `VACUUM delivery_jobs, pull_cursors`); err != nil {
			t.Fatal(err)
		}
		sizes[d] = sim.storageBytes(now.Add(4 * time.Hour))
	}

	if !stragglerDone {
		t.Errorf("the job due 20 days after day 2 was never delivered")
	}
	if stragglerAt.IsZero() || readJob(t, st, straggler).State != pg.JobSucceeded {
		t.Errorf("the straggler is %s, want succeeded", readJob(t, st, straggler).State)
	}
	if len(resumedExpired) == 0 || !resumedExpired[0] {
		t.Errorf("the reader back after 15 days was not told that events expired: %v", resumedExpired)
	}
	for _, e := range resumedExpired[1:] {
		if e {
			t.Errorf("events_expired repeated past the first read: %v", resumedExpired)
		}
	}
	// It got exactly what retention kept of its stream, oldest first.
	keptFrom := sim.day(25).Add(-sim.policy.Events)
	var want int64
	for d := 10; d <= 25; d++ {
		if sim.day(d).Add(time.Minute).After(keptFrom) {
			want += perDay
		}
	}
	if int64(len(resumed)) != want {
		t.Errorf("the reader resumed with %d events, want the %d retention kept", len(resumed), want)
	}

	t.Logf("storage by day (MB): %v", mb(sizes))
	for d := 8; d < 30; d++ {
		if sizes[d] > sizes[8]*13/10 {
			t.Errorf("day %d: storage %d bytes, more than 1.3 × day 8's %d", d, sizes[d], sizes[8])
		}
	}
	if ratio := float64(sizes[29]) / float64(sizes[8]); ratio < 0.75 || ratio > 1.25 {
		t.Errorf("storage after day 30 is %.2f × that after day 8, want about the same", ratio)
	}
	if got := sim.count(`SELECT count(*) FROM events`); got > 9*perDay {
		t.Errorf("after 30 days the inbox holds %d events, more than 9 days' worth", got)
	}
}

func mb(sizes []int64) []string {
	out := make([]string, len(sizes))
	for i, s := range sizes {
		out[i] = fmt.Sprintf("%.1f", float64(s)/(1<<20))
	}
	return out
}
