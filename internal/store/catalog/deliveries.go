package catalog

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// Delivery is one delivery job as reads show it: its state machine fields
// and the identity of the event it carries.
type Delivery struct {
	ID             uuid.UUID
	TenantID       string
	SubscriptionID uuid.UUID
	EventSeq       int64
	// EventID (the CloudEvents id) and EventKey are "" when the inbox no
	// longer holds the event; dispatch dead-letters such a job as poison.
	EventID  string
	EventKey string
	State    string
	Attempts int
	// NextAttemptAt is nil while the job is parked behind an earlier job
	// of its ordering key: it is due when that one ends, at no time known
	// now (docs/concepts.md, Ordered delivery).
	NextAttemptAt *time.Time
	DeadReason    string
	LastError     string
	LastStatus    *int
	CreatedAt     time.Time
	UpdatedAt     time.Time
	SucceededAt   *time.Time
	DeadAt        *time.Time
	// ShedReason says why the job was last handed back without an attempt
	// (breaker_open), at ShedAt; "" once it has been claimed since.
	ShedReason string
	ShedAt     *time.Time
}

// DeliveryAttempt is one recorded attempt of a delivery job.
type DeliveryAttempt struct {
	// ID is the X-Lerian-Delivery-Id the destination saw.
	ID         uuid.UUID
	Number     int
	StartedAt  time.Time
	Duration   time.Duration
	Outcome    string // succeeded or failed
	StatusCode *int
	Error      string
	// Response is the first bytes of the destination's answer (at most
	// 1 KiB), nil when there were none.
	Response []byte
}

// DeliveryQuery selects a page of one subscription's deliveries, newest
// first (by event arrival).
type DeliveryQuery struct {
	TenantID       string
	SubscriptionID uuid.UUID
	// Limit is the most deliveries returned; at least 1.
	Limit int
	// BeforeSeq continues a listing past the delivery of this event seq;
	// 0 starts with the newest.
	BeforeSeq int64
	// State, when not empty, keeps only deliveries in that state.
	State string
	// Since (inclusive) and Until (exclusive) bound created_at; zero
	// bounds nothing.
	Since, Until time.Time
}

// deliveryFields lists the scan targets of a delivery row, in the order the
// statements that read deliveries select its columns.
func deliveryFields(d *Delivery) []any {
	return []any{&d.ID, &d.TenantID, &d.SubscriptionID, &d.EventSeq, &d.EventID, &d.EventKey,
		&d.State, &d.Attempts, &d.NextAttemptAt, &d.DeadReason, &d.LastError, &d.LastStatus,
		&d.CreatedAt, &d.UpdatedAt, &d.SucceededAt, &d.DeadAt, &d.ShedReason, &d.ShedAt}
}

// ListDeliveries returns a page of a subscription's deliveries, newest
// first, and whether older ones follow. A subscription that tenantID does
// not own is an pg.ErrNotFound exactly like a missing one. A deleted
// subscription still answers: its deliveries are history that outlives it.
func (s *Store) ListDeliveries(ctx context.Context, q DeliveryQuery) (deliveries []Delivery, more bool, err error) {
	if q.Limit < 1 {
		return nil, false, fmt.Errorf("list deliveries: limit %d must be at least 1", q.Limit)
	}
	// Walks the unique (subscription_id, event_seq) index backwards from
	// the position: each page is one range scan however deep the listing
	// goes. A state filter is applied to the rows the scan meets rather
	// than through an index of its own, since every index on delivery_jobs
	// is paid for on the ingest path. The time window is such a filter
	// too, with one bound on the scan: a job is created in its event's
	// ingest transaction (created_at = received_at) or later, by a
	// recover, so a job created before Until carries an event received
	// before it, and a seq past every such event ends the scan where
	// the window does (seqBelowReceived). Since gives no bound: a
	// recovered job is newer than its event, so the scan goes on past
	// the window's start (docs/benchmarks.md, Portal deliveries page).
	var below *int64
	if !q.Until.IsZero() {
		if below, err = s.seqBelowReceived(ctx, q.Until); err != nil {
			return nil, false, pg.Classify(fmt.Errorf("list deliveries of subscription %s: %w", q.SubscriptionID, err))
		}
	}
	rows, err := s.Pool.Query(ctx, listDeliveriesSQL,
		pgx.StrictNamedArgs{"subscription_id": q.SubscriptionID, "tenant_id": q.TenantID, "before_seq": q.BeforeSeq, "below_seq": below, "state": q.State,
			"since": pg.NullIfZero(q.Since), "until": pg.NullIfZero(q.Until), "limit": q.Limit + 1})
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("list deliveries of subscription %s: %w", q.SubscriptionID, err))
	}
	deliveries, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Delivery, error) {
		var d Delivery
		return d, row.Scan(deliveryFields(&d)...)
	})
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("list deliveries of subscription %s: %w", q.SubscriptionID, err))
	}
	if len(deliveries) > 0 {
		// A job exists only under its subscription (foreign key), so rows
		// prove the subscription; only an empty page needs to ask.
		if len(deliveries) > q.Limit {
			return deliveries[:q.Limit], true, nil
		}
		return deliveries, false, nil
	}
	var exists bool
	err = s.Pool.QueryRow(ctx, subscriptionOfTenantExistsSQL,
		pgx.StrictNamedArgs{"subscription_id": q.SubscriptionID, "tenant_id": q.TenantID}).Scan(&exists)
	switch {
	case err != nil:
		return nil, false, pg.Classify(fmt.Errorf("list deliveries of subscription %s: %w", q.SubscriptionID, err))
	case !exists:
		return nil, false, pg.SubscriptionNotFound(q.SubscriptionID)
	}
	return []Delivery{}, false, nil
}

// seqBelowReceived is a seq that every event received before t lies below
// (nil when no event was received ReceivedAtSkew after t: no bound).
func (s *Store) seqBelowReceived(ctx context.Context, t time.Time) (*int64, error) {
	var seq *int64
	err := s.Pool.QueryRow(ctx, seqReceivedAfterSQL, pgx.StrictNamedArgs{"at": t.Add(pg.ReceivedAtSkew)}).Scan(&seq)
	return seq, err
}

// RecentDeliveryCounts are one subscription's latest deliveries created
// since a time, by where they stand now.
type RecentDeliveryCounts struct {
	SubscriptionID uuid.UUID
	Delivered      int64
	// Failed are still being tried after at least one failed attempt.
	Failed int64
	Dead   int64
	// Sampled says every one of the latest sample deliveries was created
	// since the time, so older ones of the window were not counted.
	Sampled bool
}

// CountRecentDeliveries counts, for each of ids that tenantID owns, the
// deliveries among its latest sample that were created at or after since.
// Subscriptions of another tenant, or missing, are left out of the answer.
func (s *Store) CountRecentDeliveries(ctx context.Context, tenantID string, ids []uuid.UUID, since time.Time, sample int) ([]RecentDeliveryCounts, error) {
	if sample < 1 {
		return nil, fmt.Errorf("count recent deliveries: sample %d must be at least 1", sample)
	}
	// One statement for the whole page of subscriptions, each a bounded
	// backward range scan of the (subscription_id, event_seq) index:
	// sample rows at most, however busy the subscription, so a page costs
	// the same every time. Creation time is not what the index orders by
	// (a recovered job is newer than its event), so the window filters
	// the sample rather than bounding the scan.
	rows, err := s.Pool.Query(ctx, countRecentDeliveriesSQL,
		pgx.StrictNamedArgs{"tenant_id": tenantID, "ids": ids, "since": since, "sample": sample})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("count recent deliveries: %w", err))
	}
	counts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (RecentDeliveryCounts, error) {
		var c RecentDeliveryCounts
		return c, row.Scan(&c.SubscriptionID, &c.Delivered, &c.Failed, &c.Dead, &c.Sampled)
	})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("count recent deliveries: %w", err))
	}
	return counts, nil
}

// LatencyHour is one hour of a subscription's attempt durations.
type LatencyHour struct {
	// Hour counts from the window's start, 0 first.
	Hour     int
	Attempts int64
	P50, P95 time.Duration
}

// AttemptLatency sorts the attempts that the latest sample deliveries of
// a subscription made in [since, until) into hours from since, with each
// hour's median and 95th percentile duration; hours without attempts are
// left out. sampled says all sample deliveries were created since, so the
// window holds attempts of older ones that were not read. A subscription
// that tenantID does not own is an pg.ErrNotFound exactly like a missing
// one.
func (s *Store) AttemptLatency(ctx context.Context, tenantID string, subscriptionID uuid.UUID, since, until time.Time, sample int) (hours []LatencyHour, sampled bool, err error) {
	if sample < 1 {
		return nil, false, fmt.Errorf("attempt latency: sample %d must be at least 1", sample)
	}
	// The cost is bounded whatever the subscription's volume: sample rows
	// of the (subscription_id, event_seq) index read backwards, then each
	// one's attempts by the (job_id, attempt) index of the attempt
	// partitions the window reaches.
	rows, err := s.Pool.Query(ctx, attemptLatencySQL, pgx.StrictNamedArgs{"tenant_id": tenantID, "subscription_id": subscriptionID,
		"since": since, "until": until, "sample": sample})
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("attempt latency of subscription %s: %w", subscriptionID, err))
	}
	hours, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (LatencyHour, error) {
		var (
			h        LatencyHour
			p50, p95 int64
		)
		err := row.Scan(&h.Hour, &h.Attempts, &p50, &p95, &sampled)
		h.P50, h.P95 = time.Duration(p50)*time.Millisecond, time.Duration(p95)*time.Millisecond
		return h, err
	})
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("attempt latency of subscription %s: %w", subscriptionID, err))
	}
	if len(hours) > 0 {
		return hours, sampled, nil
	}
	var exists bool
	err = s.Pool.QueryRow(ctx, subscriptionOfTenantExistsSQL,
		pgx.StrictNamedArgs{"subscription_id": subscriptionID, "tenant_id": tenantID}).Scan(&exists)
	switch {
	case err != nil:
		return nil, false, pg.Classify(fmt.Errorf("attempt latency of subscription %s: %w", subscriptionID, err))
	case !exists:
		return nil, false, pg.SubscriptionNotFound(subscriptionID)
	}
	return []LatencyHour{}, false, nil
}

// GetDelivery reads one delivery of tenantID with its attempts in order.
// Another tenant's delivery is an pg.ErrNotFound exactly like a missing one.
func (s *Store) GetDelivery(ctx context.Context, tenantID string, id uuid.UUID) (Delivery, []DeliveryAttempt, error) {
	// One statement, so the job and its attempts come from one snapshot:
	// the attempt count always matches the attempts listed. The job's
	// columns repeat on each attempt row; a job has a handful of attempts.
	rows, err := s.Pool.Query(ctx, getDeliverySQL,
		pgx.StrictNamedArgs{"id": id, "tenant_id": tenantID})
	if err != nil {
		return Delivery{}, nil, pg.Classify(fmt.Errorf("read delivery %s: %w", id, err))
	}
	defer rows.Close()
	var (
		d        Delivery
		attempts = []DeliveryAttempt{}
		found    bool
	)
	for rows.Next() {
		var (
			attemptID             *uuid.UUID
			number                *int
			startedAt             *time.Time
			durationMillis        *int64
			outcome, attemptError *string
			a                     DeliveryAttempt
		)
		dest := append(deliveryFields(&d), &attemptID, &number, &startedAt, &durationMillis, &outcome,
			&a.StatusCode, &attemptError, &a.Response)
		if err := rows.Scan(dest...); err != nil {
			return Delivery{}, nil, pg.Classify(fmt.Errorf("read delivery %s: %w", id, err))
		}
		found = true
		if attemptID == nil { // the left join's row for a job without attempts
			continue
		}
		a.ID, a.Number, a.StartedAt, a.Outcome = *attemptID, *number, *startedAt, *outcome
		a.Duration = time.Duration(*durationMillis) * time.Millisecond
		a.Error = pg.ValueOrZero(attemptError)
		attempts = append(attempts, a)
	}
	if err := rows.Err(); err != nil {
		return Delivery{}, nil, pg.Classify(fmt.Errorf("read delivery %s: %w", id, err))
	}
	if !found {
		return Delivery{}, nil, deliveryNotFound(id)
	}
	return d, attempts, nil
}

func deliveryNotFound(id uuid.UUID) error {
	return fmt.Errorf("%w: delivery %s", pg.ErrNotFound, id)
}

//go:embed sql/subscription_of_tenant_exists.sql
var subscriptionOfTenantExistsSQL string

//go:embed sql/get_delivery.sql
var getDeliverySQL string

//go:embed sql/count_recent_deliveries.sql
var countRecentDeliveriesSQL string

//go:embed sql/attempt_latency.sql
var attemptLatencySQL string

//go:embed sql/seq_received_after.sql
var seqReceivedAfterSQL string

//go:embed sql/list_deliveries.sql
var listDeliveriesSQL string
