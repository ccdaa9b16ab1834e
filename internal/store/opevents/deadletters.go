package opevents

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/jackc/pgx/v5/pgxpool"
)

// MaxDeadLetterIDs is how many event ids one report of dead letters names.
const MaxDeadLetterIDs = 100

// DeadLetters are jobs of one subscription that went dead for one reason
// in one transaction.
type DeadLetters struct {
	SubscriptionID uuid.UUID
	TenantID       string
	Reason         string
	Count          int64
	EventIDs       []uuid.UUID // at most MaxDeadLetterIDs are kept
	At             time.Time
}

// DeadLetterReport is what one report of dead letters says: how many of a
// subscription's jobs went dead for a reason since Since, and the ids of
// the first of their events.
type DeadLetterReport struct {
	SubscriptionID   uuid.UUID
	Reason           string
	TenantID         string
	SubscriptionName string
	Since            time.Time
	Count            int64
	EventIDs         []uuid.UUID
	// At is when the report is made.
	At time.Time
}

// AddDeadLetters reports d in the transaction that dead-lettered them, at
// most one report per subscription and reason per window (SPEC §11): the
// first dead letters after a quiet window are reported at once, and those
// that follow within the window gather into one report when it ends
// (FlushDeadLetters), or with the first dead letters after it. report
// writes a report in tx; the caller holds the ingest lock
// (pg.ShareIngestLock).
func AddDeadLetters(ctx context.Context, tx pgx.Tx, d DeadLetters, window time.Duration, report func(context.Context, pgx.Tx, []DeadLetterReport) error) error {
	ids := d.EventIDs[:min(len(d.EventIDs), MaxDeadLetterIDs)]
	if ids == nil {
		ids = []uuid.UUID{}
	}
	var opened []bool
	rows, err := tx.Query(ctx, addDeadLettersSQL, pgx.StrictNamedArgs{"subscription_id": d.SubscriptionID, "reason": d.Reason, "tenant_id": d.TenantID,
		"at": d.At, "dead": d.Count, "event_ids": ids, "max_ids": MaxDeadLetterIDs, "opened_after": d.At.Add(-window)})
	if err == nil {
		opened, err = pgx.CollectRows(rows, pgx.RowTo[bool])
	}
	if err != nil {
		return fmt.Errorf("add dead letters: %w", err)
	}
	if len(opened) == 1 && !opened[0] {
		return nil // gathered into the open window
	}
	r := DeadLetterReport{SubscriptionID: d.SubscriptionID, Reason: d.Reason, TenantID: d.TenantID, Since: d.At, Count: d.Count, EventIDs: ids, At: d.At}
	if len(opened) == 0 {
		// The window ended and no flush took it yet: what it gathered is
		// reported with these, and a new window opens.
		var gathered int64
		var gatheredIDs []uuid.UUID
		err := tx.QueryRow(ctx, takeDeadLetterWindowSQL, pgx.StrictNamedArgs{"subscription_id": d.SubscriptionID, "reason": d.Reason, "at": d.At}).
			Scan(&r.Since, &gathered, &gatheredIDs)
		if err != nil {
			return fmt.Errorf("close the dead letter window: %w", err)
		}
		r.Count += gathered
		r.EventIDs = append(gatheredIDs, ids...)[:min(len(gatheredIDs)+len(ids), MaxDeadLetterIDs)]
	}
	if err := tx.QueryRow(ctx, subscriptionNameSQL, pgx.StrictNamedArgs{"subscription_id": d.SubscriptionID}).Scan(&r.SubscriptionName); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	return report(ctx, tx, []DeadLetterReport{r})
}

// FlushDeadLetters ends, in one transaction with their reports, up to
// limit windows that had run their course at now, and hands report those
// that gathered dead letters. Two instances flushing at once take
// different windows. It returns how many windows it ended.
func FlushDeadLetters(ctx context.Context, pool *pgxpool.Pool, now time.Time, window time.Duration, limit int, report func(context.Context, pgx.Tx, []DeadLetterReport) error) (int, error) {
	var n int
	err := pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		if err := pg.ShareIngestLock(ctx, tx); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, takeDueDeadLetterWindowsSQL, pgx.StrictNamedArgs{"opened_before": now.Add(-window), "limit": limit})
		if err != nil {
			return err
		}
		ended, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (DeadLetterReport, error) {
			r := DeadLetterReport{At: now}
			err := row.Scan(&r.SubscriptionID, &r.Reason, &r.TenantID, &r.SubscriptionName, &r.Since, &r.Count, &r.EventIDs)
			return r, err
		})
		if err != nil {
			return err
		}
		n = len(ended)
		var gathered []DeadLetterReport
		for _, r := range ended {
			if r.Count > 0 {
				gathered = append(gathered, r)
			}
		}
		if len(gathered) == 0 {
			return nil
		}
		return report(ctx, tx, gathered)
	})
	if err != nil {
		return 0, pg.Classify(fmt.Errorf("report dead letters: %w", err))
	}
	return n, nil
}

//go:embed sql/add_dead_letters.sql
var addDeadLettersSQL string

//go:embed sql/take_dead_letter_window.sql
var takeDeadLetterWindowSQL string

//go:embed sql/take_due_dead_letter_windows.sql
var takeDueDeadLetterWindowsSQL string

//go:embed sql/subscription_name.sql
var subscriptionNameSQL string
