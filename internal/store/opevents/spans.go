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

// MarkSpanReported records in tx that the subscription's open failure
// span was reported failing, so it is reported once.
func MarkSpanReported(ctx context.Context, tx pgx.Tx, subscription uuid.UUID) error {
	_, err := tx.Exec(ctx, markSpanReportedSQL, pgx.StrictNamedArgs{"subscription_id": subscription})
	return err
}

// ClosedSpan is a failure span reported failing that a success closed.
type ClosedSpan struct {
	SubscriptionID   uuid.UUID
	TenantID         string
	SubscriptionName string
	FailingSince     time.Time
	// RecoveredAt is when the success that closed it finished.
	RecoveredAt time.Time
}

// CloseReportedSpan closes, in one transaction with its report, the span
// reported failing that a success finished at `finished` closes (the
// successes' own statement leaves such a span open: queue.CompleteResult's
// ReportedSpanOpen). Nothing happens when the span is no longer open or a
// failure came after the success. report writes the recovery.
func CloseReportedSpan(ctx context.Context, pool *pgxpool.Pool, subscription uuid.UUID, finished time.Time, report func(context.Context, pgx.Tx, ClosedSpan) error) (closed bool, err error) {
	err = pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		closed = false
		if err := pg.ShareIngestLock(ctx, tx); err != nil {
			return err
		}
		span := ClosedSpan{SubscriptionID: subscription, RecoveredAt: finished}
		err := tx.QueryRow(ctx, closeReportedSpanSQL, pgx.StrictNamedArgs{"subscription_id": subscription, "finished": finished}).
			Scan(&span.TenantID, &span.SubscriptionName, &span.FailingSince)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		closed = true
		return report(ctx, tx, span)
	})
	if err != nil {
		return false, pg.Classify(fmt.Errorf("close the reported failure span of %s: %w", subscription, err))
	}
	return closed, nil
}

// EventIDsOf reads the ids of the events of seqs, in seq order.
func EventIDsOf(ctx context.Context, tx pgx.Tx, seqs []int64) ([]uuid.UUID, error) {
	if len(seqs) == 0 {
		return nil, nil
	}
	rows, err := tx.Query(ctx, eventIDsOfSQL, pgx.StrictNamedArgs{"seqs": seqs})
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}

//go:embed sql/mark_span_reported.sql
var markSpanReportedSQL string

//go:embed sql/close_reported_span.sql
var closeReportedSpanSQL string

//go:embed sql/event_ids_of.sql
var eventIDsOfSQL string
