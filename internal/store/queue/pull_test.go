package queue_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

// deliveryBase is when the seeded events were made.
var deliveryBase = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// seedSubscription inserts a webhook subscription of tenant (and the
// tenant) and returns its id.
func seedSubscription(t *testing.T, st *storetest.Store, tenant string) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	if _, err := st.Pool.Exec(ctx, `INSERT INTO tenants (id) VALUES ($1) ON CONFLICT DO NOTHING`, tenant); err != nil {
		t.Fatalf("insert tenant: %v", err)
	}
	id := uuid.Must(uuid.NewV7())
	_, err := st.Pool.Exec(ctx, `
		INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state, signing_secret)
		VALUES ($1, $2, 'hook', 'webhook', 'https://hooks.test:443', '{*}', 'active', 'sealed')`, id, tenant)
	if err != nil {
		t.Fatalf("insert subscription: %v", err)
	}
	return id
}

// seedPullSubscription inserts a pull subscription of tenant (and the
// tenant) with its cursor at 0, as CreateSubscription does, and returns its
// id.
func seedPullSubscription(t *testing.T, st *storetest.Store, tenant string) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	if _, err := st.Pool.Exec(ctx, `INSERT INTO tenants (id) VALUES ($1) ON CONFLICT DO NOTHING`, tenant); err != nil {
		t.Fatalf("insert tenant: %v", err)
	}
	id := uuid.Must(uuid.NewV7())
	_, err := st.Pool.Exec(ctx, `
		WITH sub AS (
		    INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state)
		    VALUES ($1, $2, 'feed', 'pull', 'pull', '{*}', 'active')
		    RETURNING id)
		INSERT INTO pull_cursors (subscription_id) SELECT id FROM sub`, id, tenant)
	if err != nil {
		t.Fatalf("insert pull subscription: %v", err)
	}
	return id
}

// appendPullEvents stores n events of tenant in the inbox, each matched to
// every subscription in subs, and returns their seqs in order.
func appendPullEvents(t *testing.T, st *storetest.Store, tenant string, n int, subs ...uuid.UUID) []int64 {
	t.Helper()
	rows, err := st.Pool.Query(context.Background(), `
		WITH ev AS (
		    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
		                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset, datacontenttype)
		    SELECT $1, gen_random_uuid(), 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.transaction.posted', $2,
		           '{}', '{}', convert_to('{"n":' || g || '}', 'UTF8'), 'topic', 0, g, 'application/json'
		    FROM generate_series(1, $3) g
		    RETURNING seq),
		entries AS (
		    INSERT INTO pull_entries (subscription_id, event_seq)
		    SELECT s, seq FROM ev, unnest($4::uuid[]) s)
		SELECT seq FROM ev ORDER BY seq`, tenant, deliveryBase, n, subs)
	if err != nil {
		t.Fatalf("insert events: %v", err)
	}
	seqs, err := collectSeqs(rows)
	if err != nil {
		t.Fatalf("insert events: %v", err)
	}
	return seqs
}

func collectSeqs(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close()
}) ([]int64, error) {
	defer rows.Close()
	var seqs []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		seqs = append(seqs, seq)
	}
	return seqs, rows.Err()
}

func cursorOf(t *testing.T, st *storetest.Store, sub uuid.UUID) int64 {
	t.Helper()
	var cursor int64
	if err := st.Pool.QueryRow(context.Background(), `SELECT cursor_seq FROM pull_cursors WHERE subscription_id = $1`, sub).Scan(&cursor); err != nil {
		t.Fatalf("read cursor: %v", err)
	}
	return cursor
}

func seqsOf(events []queue.PulledEvent) []int64 {
	seqs := make([]int64, len(events))
	for i, e := range events {
		seqs[i] = e.Seq
	}
	return seqs
}

func readPull(t *testing.T, st *storetest.Store, tenant string, sub uuid.UUID, limit int, after *int64) queue.PullResult {
	t.Helper()
	res, err := st.ReadPull(context.Background(), queue.PullQuery{TenantID: tenant, SubscriptionID: sub, Limit: limit, After: after})
	if err != nil {
		t.Fatalf("read pull: %v", err)
	}
	return res
}

func TestReadPullFromTheCursorAcksWhatItReturns(t *testing.T) {
	st := storetest.Open(t)
	sub := seedPullSubscription(t, st, "acme")
	seqs := appendPullEvents(t, st, "acme", 5, sub)

	for _, want := range [][]int64{seqs[0:2], seqs[2:4], seqs[4:5], {}} {
		before := cursorOf(t, st, sub)
		res := readPull(t, st, "acme", sub, 2, nil)
		if got := seqsOf(res.Events); !slices.Equal(got, want) {
			t.Fatalf("page %v, want %v", got, want)
		}
		wantCursor := before
		if len(want) > 0 {
			wantCursor = want[len(want)-1]
		}
		if res.CursorBefore != before || res.CursorAfter != wantCursor || cursorOf(t, st, sub) != wantCursor {
			t.Errorf("cursor %d -> %d (stored %d), want %d -> %d", res.CursorBefore, res.CursorAfter, cursorOf(t, st, sub), before, wantCursor)
		}
	}

	// Every column comes back as ingest stored it.
	res := readPull(t, st, "acme", sub, 1, new(int64))
	e := res.Events[0]
	if e.Seq != seqs[0] || e.Key != "transaction.posted" || e.Type != "studio.lerian.transaction.posted" || e.Source != "midaz" ||
		e.TenantID != "acme" || e.SchemaVersion != "1.0.0" || e.DataContentType != "application/json" || e.Subject != "" ||
		!e.Time.Equal(deliveryBase) || e.ReceivedAt.IsZero() || string(e.Payload) != `{"n":1}` || uuid.Validate(e.ID) != nil {
		t.Errorf("event %+v", e)
	}
}

func TestReadPullAfter(t *testing.T) {
	st := storetest.Open(t)
	sub := seedPullSubscription(t, st, "acme")
	seqs := appendPullEvents(t, st, "acme", 10, sub)
	readPull(t, st, "acme", sub, 4, nil) // cursor at seqs[3]

	cases := []struct {
		name       string
		after      int64
		limit      int
		wantPage   []int64
		wantCursor int64
	}{
		// Backward: an older page, the cursor stays.
		{"backward, below the cursor", seqs[0], 2, seqs[1:3], seqs[3]},
		{"backward, up to the cursor", 0, 4, seqs[0:4], seqs[3]},
		// Backward, but the page runs past the cursor: those events were
		// delivered, so the cursor moves to the page's end, never back.
		{"backward, past the cursor", seqs[1], 3, seqs[2:5], seqs[4]},
		// Forward: the skipped range is given up.
		{"forward", seqs[6], 2, seqs[7:9], seqs[8]},
		// Forward past everything: no items, so nothing moves.
		{"forward past the end", seqs[9] + 100, 2, []int64{}, seqs[8]},
		{"from the cursor after a skip", -1, 10, seqs[9:10], seqs[9]},
	}
	for _, tc := range cases {
		var after *int64
		if tc.after >= 0 {
			after = &tc.after
		}
		res := readPull(t, st, "acme", sub, tc.limit, after)
		if got := seqsOf(res.Events); !slices.Equal(got, tc.wantPage) {
			t.Errorf("%s: page %v, want %v", tc.name, got, tc.wantPage)
		}
		if got := cursorOf(t, st, sub); got != tc.wantCursor || res.CursorAfter != got {
			t.Errorf("%s: cursor %d (result says %d), want %d", tc.name, got, res.CursorAfter, tc.wantCursor)
		}
	}
}

func TestAdvanceCursor(t *testing.T) {
	cases := []struct {
		cursor, lastSeq, want int64
	}{
		{0, 5, 5},   // first read
		{5, 9, 9},   // a read from the cursor, or a forward after
		{9, 4, 9},   // a backward page below the cursor
		{9, 9, 9},   // a backward page ending at the cursor
		{9, 12, 12}, // a backward page running past the cursor
	}
	for _, tc := range cases {
		if got := queue.AdvanceCursor(tc.cursor, tc.lastSeq); got != tc.want {
			t.Errorf("AdvanceCursor(%d, %d) = %d, want %d", tc.cursor, tc.lastSeq, got, tc.want)
		}
	}
}

func TestReadPullScope(t *testing.T) {
	st := storetest.Open(t)
	orders := seedPullSubscription(t, st, "acme")
	audit := seedPullSubscription(t, st, "acme")
	hook := seedSubscription(t, st, "acme")
	globex := seedPullSubscription(t, st, "globex")
	deleted := seedPullSubscription(t, st, "acme")
	if _, err := st.Pool.Exec(context.Background(), `UPDATE subscriptions SET deleted_at = now() WHERE id = $1`, deleted); err != nil {
		t.Fatal(err)
	}

	both := appendPullEvents(t, st, "acme", 3, orders, audit)
	onlyOrders := appendPullEvents(t, st, "acme", 2, orders)
	globexSeqs := appendPullEvents(t, st, "globex", 2, globex)

	// Two pull subscriptions of one tenant: each its own stream and cursor.
	if got := seqsOf(readPull(t, st, "acme", orders, 100, nil).Events); !slices.Equal(got, append(slices.Clone(both), onlyOrders...)) {
		t.Errorf("orders read %v", got)
	}
	if cursorOf(t, st, audit) != 0 {
		t.Error("reading one subscription moved another's cursor")
	}
	if got := seqsOf(readPull(t, st, "acme", audit, 100, nil).Events); !slices.Equal(got, both) {
		t.Errorf("audit read %v, want %v", got, both)
	}
	if got := seqsOf(readPull(t, st, "globex", globex, 100, nil).Events); !slices.Equal(got, globexSeqs) {
		t.Errorf("globex read %v, want %v", got, globexSeqs)
	}

	cases := []struct {
		name   string
		tenant string
		sub    uuid.UUID
		want   error
	}{
		{"another tenant's subscription", "acme", globex, pg.ErrNotFound},
		{"own subscription under another tenant", "globex", orders, pg.ErrNotFound},
		{"deleted subscription", "acme", deleted, pg.ErrNotFound},
		{"missing subscription", "acme", uuid.Must(uuid.NewV7()), pg.ErrNotFound},
		{"push subscription", "acme", hook, queue.ErrNotPull},
	}
	for _, tc := range cases {
		_, err := st.ReadPull(context.Background(), queue.PullQuery{TenantID: tc.tenant, SubscriptionID: tc.sub, Limit: 10})
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if !errors.Is(queue.ErrNotPull, pg.ErrConflict) {
		t.Error("ErrNotPull is not an ErrConflict")
	}
	for _, q := range []queue.PullQuery{{TenantID: "acme", SubscriptionID: orders}, {TenantID: "acme", SubscriptionID: orders, Limit: 1, After: new(int64(-1))}} {
		if _, err := st.ReadPull(context.Background(), q); err == nil {
			t.Errorf("query %+v accepted", q)
		}
	}
}

// TestConcurrentReadersNeverShareAPage runs readers of one subscription at
// once, forward and backward, while events keep arriving. An event is new to
// a read when it lies past the cursor the read found; across all reads every
// event must be new exactly once, and the cursor must never move back.
func TestConcurrentReadersNeverShareAPage(t *testing.T) {
	st := storetest.Open(t)
	sub := seedPullSubscription(t, st, "acme")
	const batches, perBatch = 10, 30
	ctx := context.Background()

	var (
		mu       sync.Mutex
		newCount = map[int64]int{}
		failures atomic.Int32
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	reader := func(backward bool) {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			q := queue.PullQuery{TenantID: "acme", SubscriptionID: sub, Limit: 7}
			if backward {
				q.After = new(int64(0))
			}
			res, err := st.ReadPull(ctx, q)
			if err != nil {
				t.Errorf("read: %v", err)
				failures.Add(1)
				return
			}
			if !slices.IsSorted(seqsOf(res.Events)) || res.CursorAfter < res.CursorBefore {
				t.Errorf("read %v moved the cursor %d -> %d", seqsOf(res.Events), res.CursorBefore, res.CursorAfter)
			}
			mu.Lock()
			for _, e := range res.Events {
				if e.Seq > res.CursorBefore {
					newCount[e.Seq]++
				}
			}
			mu.Unlock()
		}
	}
	for i := range 6 {
		wg.Add(1)
		go reader(i == 0)
	}
	// The cursor as others see it never moves back either.
	wg.Add(1)
	go func() {
		defer wg.Done()
		var last int64
		for {
			select {
			case <-stop:
				return
			default:
			}
			var cursor int64
			if err := st.Pool.QueryRow(ctx, `SELECT cursor_seq FROM pull_cursors WHERE subscription_id = $1`, sub).Scan(&cursor); err != nil {
				t.Errorf("watch cursor: %v", err)
				return
			}
			if cursor < last {
				t.Errorf("cursor moved back from %d to %d", last, cursor)
			}
			last = cursor
		}
	}()

	var all []int64
	for range batches {
		all = append(all, appendPullEvents(t, st, "acme", perBatch, sub)...)
	}
	// Let the readers drain what is left, then stop them.
	deadline := time.Now().Add(30 * time.Second)
	for cursorOf(t, st, sub) < all[len(all)-1] && failures.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()

	for _, seq := range all {
		if newCount[seq] != 1 {
			t.Errorf("event %d was new to %d reads, want exactly 1", seq, newCount[seq])
		}
	}
	if len(newCount) != len(all) {
		t.Errorf("%d events were new to some read, %d were stored", len(newCount), len(all))
	}
}
