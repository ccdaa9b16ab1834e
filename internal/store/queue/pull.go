package queue

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// ErrNotPull answers a pull read of a push subscription. It is an
// pg.ErrConflict: the subscription exists, its kind rules the read out.
var ErrNotPull = fmt.Errorf("%w: not a pull subscription", pg.ErrConflict)

// PullQuery is one read of a pull subscription's stream (docs/consuming.md, Pulling events).
type PullQuery struct {
	TenantID       string
	SubscriptionID uuid.UUID
	// Limit is the most events returned; at least 1.
	Limit int
	// After, when set, reads the events after this seq instead of after the
	// durable cursor.
	After *int64
}

// PulledEvent is one event of a pull read, as the inbox holds it.
type PulledEvent struct {
	Seq             int64
	ID              string // the CloudEvents id
	Key             string // <resourcetype>.<eventtype>
	Type            string // the full CloudEvents type
	Source          string
	TenantID        string
	SchemaVersion   string
	Subject         string
	DataContentType string
	Time            time.Time
	ReceivedAt      time.Time
	Payload         []byte
}

// PullResult is what a pull read returned and where it left the cursor.
type PullResult struct {
	Events []PulledEvent
	// CursorBefore and CursorAfter are the durable cursor as the read found
	// it and as it committed it.
	CursorBefore, CursorAfter int64
	// EventsExpired says the read started behind retention: entries after
	// its starting point were removed before anyone read them, and the page
	// begins at the oldest retained one.
	EventsExpired bool
}

// ReadPull reads a page of a pull subscription's events, ascending by seq,
// and advances the durable cursor in the same transaction: reading is the
// ack. A subscription that is missing, deleted or another tenant's is an
// pg.ErrNotFound; a push subscription is ErrNotPull.
//
// Two readers of one subscription must never both get a page as new, and the
// cursor must never move back. The read therefore starts by locking the
// cursor row (FOR UPDATE) and holds it until commit: readers of one
// subscription take turns, and each finds the cursor the previous one
// committed, since under READ COMMITTED a row locked after a wait is re-read
// at its newest version. An optimistic compare-and-set of the cursor would
// allow the same, but a loser would have read its page for nothing and must
// read again; the lock makes the loser wait a few milliseconds instead.
// Readers of different subscriptions never wait for each other, and ingest,
// which only appends entries, never waits for a reader.
//
// Ingest batches commit in any order of their seqs (lockAndLoad), so an
// entry may still commit below a seq a reader could see. The page
// therefore ends below the ingest horizon (migration 000012), read by a
// statement of its own before the page's: nothing below it can commit any
// more, so the cursor never moves past an entry that is still to come.
func (s *Store) ReadPull(ctx context.Context, q PullQuery) (PullResult, error) {
	if q.Limit < 1 {
		return PullResult{}, fmt.Errorf("read pull subscription: limit %d must be at least 1", q.Limit)
	}
	if q.After != nil && *q.After < 0 {
		return PullResult{}, fmt.Errorf("read pull subscription: after %d must not be negative", *q.After)
	}
	var res PullResult
	err := pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		var err error
		res, err = readPull(ctx, tx, q)
		return err
	})
	if errors.Is(err, pg.ErrNotFound) || errors.Is(err, pg.ErrConflict) {
		return PullResult{}, err
	}
	if err != nil {
		return PullResult{}, pg.Classify(fmt.Errorf("read pull subscription %s: %w", q.SubscriptionID, err))
	}
	return res, nil
}

// lockCursor finds the live pull subscription of the tenant and locks its
// cursor. Only pull subscriptions have a cursor row (CreateSubscription
// makes it with the subscription, and a sink type never changes), so the
// join also tells a pull subscription from any other.
//
//go:embed sql/lock_cursor.sql
var lockCursor string

// readHorizon keeps the ingest horizon for the rest of the transaction, for
// selectPage to read. It must be its own statement: a statement's snapshot
// is taken when it starts, and a batch committing between that snapshot
// and a horizon read inside the same statement would go unseen below it.
//
//go:embed sql/read_horizon.sql
var readHorizon string

// selectPage reads the page in one range scan of pull_entries' primary key,
// probing the inbox for each entry, below the horizon readHorizon kept. It
// runs after lockCursor and readHorizon in the same round trip with a
// snapshot of its own, so the cursor it starts from when no `after` is
// given (@after NULL) is the one lockCursor locked.
//
// The horizon cuts the page after its LIMIT, which keeps the same rows (the
// entries below the horizon of an ascending run are a prefix of it) and
// keeps the plan the LIMIT gets: a second unknown bound on the range makes
// the planner guess a handful of rows and join whole partitions instead of
// walking the index to the page's end.
//
//go:embed sql/select_page.sql
var selectPage string

func readPull(ctx context.Context, tx pgx.Tx, q PullQuery) (PullResult, error) {
	var (
		res     PullResult
		expired int64
		found   bool
	)
	pipe := &pgx.Batch{}
	pg.OnRow(pipe.Queue(lockCursor, pgx.StrictNamedArgs{"subscription_id": q.SubscriptionID, "tenant_id": q.TenantID}),
		"lock the cursor", func(row pgx.Row) error {
			err := row.Scan(&res.CursorBefore, &expired)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil // no cursor to lock: the page means nothing
			}
			found = err == nil
			return err
		})
	pg.OnExec(pipe.Queue(readHorizon), "read the ingest horizon", nil)
	pg.OnRows(pipe.Queue(selectPage, pgx.StrictNamedArgs{"subscription_id": q.SubscriptionID, "limit": q.Limit, "after": q.After}),
		"read the page", func(rows pgx.Rows) (err error) {
			res.Events, err = scanPage(rows, q.Limit)
			return err
		})
	if err := tx.SendBatch(ctx, pipe).Close(); err != nil {
		return PullResult{}, err
	}
	if !found {
		return PullResult{}, notAPullSubscription(ctx, tx, q)
	}

	res.CursorAfter = res.CursorBefore
	if len(res.Events) > 0 {
		res.CursorAfter = AdvanceCursor(res.CursorBefore, res.Events[len(res.Events)-1].Seq)
	}
	start := res.CursorBefore
	if q.After != nil {
		start = *q.After
	}
	res.EventsExpired = start < expired
	if res.EventsExpired && q.After == nil {
		// Told once: what expired is given up like a skipped range, so
		// the next read from the cursor is not flagged again.
		res.CursorAfter = max(res.CursorAfter, expired)
	}
	if res.CursorAfter != res.CursorBefore {
		// The lock makes the condition redundant; it keeps the cursor
		// monotonic even if the lock were ever dropped.
		_, err := tx.Exec(ctx, readPullSQL, pgx.StrictNamedArgs{"subscription_id": q.SubscriptionID, "cursor_after": res.CursorAfter})
		if err != nil {
			return PullResult{}, fmt.Errorf("advance the cursor: %w", err)
		}
	}
	return res, nil
}

// scanPage reads the events of selectPage.
func scanPage(rows pgx.Rows, limit int) ([]PulledEvent, error) {
	events := make([]PulledEvent, 0, min(limit, 1024))
	var e PulledEvent
	_, err := pgx.ForEachRow(rows, []any{&e.Seq, &e.ID, &e.Key, &e.Type, &e.Source, &e.TenantID, &e.SchemaVersion,
		&e.Subject, &e.DataContentType, &e.Time, &e.ReceivedAt, &e.Payload}, func() error {
		events = append(events, e)
		e = PulledEvent{} // the payload buffer must not be shared between rows
		return nil
	})
	return events, err
}

// notAPullSubscription explains why lockCursor found nothing: the
// subscription is a live one of the tenant with another sink (ErrNotPull),
// or there is no such subscription for the tenant (pg.ErrNotFound).
func notAPullSubscription(ctx context.Context, tx pgx.Tx, q PullQuery) error {
	var sinkType string
	err := tx.QueryRow(ctx, notAPullSubscriptionSQL,
		pgx.StrictNamedArgs{"subscription_id": q.SubscriptionID, "tenant_id": q.TenantID}).Scan(&sinkType)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return pg.SubscriptionNotFound(q.SubscriptionID)
	case err != nil:
		return fmt.Errorf("look up subscription %s: %w", q.SubscriptionID, err)
	case sinkType == pg.PullSinkType:
		// A pull subscription without a cursor breaks CreateSubscription's
		// promise; say so rather than pretend it is something else.
		return fmt.Errorf("pull subscription %s has no cursor row", q.SubscriptionID)
	}
	return fmt.Errorf("%w: subscription %s has a %s sink", ErrNotPull, q.SubscriptionID, sinkType)
}

// AdvanceCursor is where a read that returned events up to lastSeq leaves a
// cursor that stood at cursor: max(cursor, lastSeq) (docs/consuming.md, Pulling events). It covers
// every case of `after`: a read from the cursor moves it to its last event;
// a forward `after` moves it past the skipped range to its last event; a
// backward `after` whose page ends at or below the cursor leaves it alone,
// and one whose page runs past the cursor moves it to the page's end, since
// those events were delivered as surely as by a read from the cursor.
func AdvanceCursor(cursor, lastSeq int64) int64 {
	return max(cursor, lastSeq)
}

//go:embed sql/read_pull.sql
var readPullSQL string

//go:embed sql/not_a_pull_subscription.sql
var notAPullSubscriptionSQL string
