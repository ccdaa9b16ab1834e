package catalog

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// InboxEvent is one stored event as support reads it: its CloudEvents
// attributes, where it came from in Kafka, and (when read alone) its
// headers and payload.
type InboxEvent struct {
	Seq             int64
	TenantID        string
	ID              uuid.UUID // the CloudEvents id
	Key             string    // <resourcetype>.<eventtype>
	Type            string    // the full CloudEvents type
	Source          string
	Subject         string
	SchemaVersion   string
	DataContentType string
	DataSchema      string
	TraceParent     string
	TraceState      string
	Time            time.Time
	ReceivedAt      time.Time
	Topic           string
	Partition       int32
	Offset          int64
	Size            int // payload bytes
	// Headers and Payload are read by GetInboxEvent only: a listing shows
	// what finds an event, not its contents.
	Headers []RawHeader
	Payload []byte
}

// InboxQuery selects a page of a tenant's events, newest first. Empty
// filters select everything; Since is inclusive and Until exclusive, on
// the time the hub received the event.
type InboxQuery struct {
	TenantID string
	Key      string
	Source   string
	Subject  string
	Since    time.Time
	Until    time.Time
	// BeforeSeq continues a listing past the event of this seq; 0 starts
	// with the newest.
	BeforeSeq int64
	// Limit is the most events returned; at least 1.
	Limit int

	// KeyPrefix keeps the events whose key starts with it ("hub." for
	// the pattern hub.*); "" keeps every key.
	KeyPrefix string
}

func inboxFields(e *InboxEvent) []any {
	return []any{&e.Seq, &e.TenantID, &e.ID, &e.Key, &e.Type, &e.Source, &e.Subject, &e.SchemaVersion,
		&e.DataContentType, &e.DataSchema, &e.TraceParent, &e.TraceState,
		&e.Time, &e.ReceivedAt, &e.Topic, &e.Partition, &e.Offset, &e.Size}
}

// ListInboxEvents returns a page of a tenant's events, newest first, and
// whether older ones follow. The filters are plain predicates on the events
// table, so the query holds however the table is laid out (a time bound
// lets a table split by time skip what is out of range).
func (s *Store) ListInboxEvents(ctx context.Context, q InboxQuery) (events []InboxEvent, more bool, err error) {
	if q.Limit < 1 {
		return nil, false, fmt.Errorf("list events: limit %d must be at least 1", q.Limit)
	}
	rows, err := s.Pool.Query(ctx, listInboxEventsSQL,
		pgx.NamedArgs{
			"tenant": q.TenantID, "before": q.BeforeSeq, "key": q.Key, "key_prefix": q.KeyPrefix, "source": q.Source, "subject": q.Subject,
			"since": pg.NullIfZero(q.Since), "until": pg.NullIfZero(q.Until), "limit": q.Limit + 1,
		})
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("list events: %w", err))
	}
	events, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (InboxEvent, error) {
		var e InboxEvent
		return e, row.Scan(inboxFields(&e)...)
	})
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("list events: %w", err))
	}
	if len(events) > q.Limit {
		return events[:q.Limit], true, nil
	}
	return events, false, nil
}

// GetInboxEvent reads one event of tenantID by its CloudEvents id, headers
// and payload included. Another tenant's event is an pg.ErrNotFound exactly
// like a missing one.
func (s *Store) GetInboxEvent(ctx context.Context, tenantID string, id uuid.UUID) (InboxEvent, error) {
	var (
		e            InboxEvent
		keys, values [][]byte
		derived      int64
	)
	err := s.Pool.QueryRow(ctx, getInboxEventSQL, pgx.StrictNamedArgs{"tenant_id": tenantID, "id": id}).
		Scan(append(inboxFields(&e), &keys, &values, &derived, &e.Payload)...)
	if err == pgx.ErrNoRows {
		return InboxEvent{}, fmt.Errorf("%w: event %s", pg.ErrNotFound, id)
	}
	if err != nil {
		return InboxEvent{}, pg.Classify(fmt.Errorf("read event %s: %w", id, err))
	}
	e.Headers = pairHeaders(keys, values)
	if derived != 0 {
		stored := e.stored()
		for i := range e.Headers {
			e.Headers[i].Value = event.RestoreHeader(stored, uint64(derived), i, string(e.Headers[i].Key), e.Headers[i].Value)
		}
	}
	return e, nil
}

// stored is e's attribute columns, which the headers ingest marked as
// derived refer to.
func (e *InboxEvent) stored() event.Stored {
	return event.Stored{
		ID: e.ID.String(), Source: e.Source, Type: e.Type, SchemaVersion: e.SchemaVersion, Key: e.Key, TenantID: e.TenantID,
		Subject: e.Subject, DataContentType: e.DataContentType, DataSchema: e.DataSchema,
		TraceParent: e.TraceParent, TraceState: e.TraceState, Time: e.Time,
	}
}

// EventDelivery is what became of one event for one subscription: a push
// subscription's delivery job with its attempts, or a pull subscription's
// entry and whether its cursor has passed it.
type EventDelivery struct {
	SubscriptionID   uuid.UUID
	SubscriptionName string
	SinkType         string
	// Job and Attempts are set for push subscriptions.
	Job      *Delivery
	Attempts []DeliveryAttempt
	// Pulled is set for pull subscriptions: the durable cursor is at or
	// past the event.
	Pulled *bool
}

// EventDeliveries returns what became of the event at seq for each of
// tenantID's subscriptions that matched it, deleted ones included (their
// history stays), ordered by subscription name. Each lookup goes through a
// subscription's own (subscription_id, event_seq) key, so the cost follows
// the tenant's subscriptions, not the size of the job table.
func (s *Store) EventDeliveries(ctx context.Context, tenantID string, seq int64) ([]EventDelivery, error) {
	var out []EventDelivery
	// One snapshot for the jobs, their attempts and the pull entries.
	err := pgx.BeginTxFunc(ctx, s.Pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		out = nil
		rows, err := tx.Query(ctx, eventPushDeliveriesSQL, pgx.NamedArgs{"tenant": tenantID, "seq": seq})
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (EventDelivery, error) {
			d := EventDelivery{Job: &Delivery{}}
			err := row.Scan(append([]any{&d.SubscriptionName, &d.SinkType}, deliveryFields(d.Job)...)...)
			d.SubscriptionID = d.Job.SubscriptionID
			return d, err
		})
		if err != nil {
			return err
		}
		if err := attachAttempts(ctx, tx, out); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, eventPullDeliveriesSQL, pgx.NamedArgs{"tenant": tenantID, "seq": seq})
		if err != nil {
			return err
		}
		pulls, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (EventDelivery, error) {
			var d EventDelivery
			var pulled bool
			err := row.Scan(&d.SubscriptionID, &d.SubscriptionName, &d.SinkType, &pulled)
			d.Pulled = &pulled
			return d, err
		})
		out = append(out, pulls...)
		return err
	})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("read deliveries of event %d: %w", seq, err))
	}
	return out, nil
}

// attachAttempts reads the attempts of the jobs in ds in one query.
func attachAttempts(ctx context.Context, tx pgx.Tx, ds []EventDelivery) error {
	if len(ds) == 0 {
		return nil
	}
	byJob := make(map[uuid.UUID]*EventDelivery, len(ds))
	ids := make([]uuid.UUID, len(ds))
	for i := range ds {
		ds[i].Attempts = []DeliveryAttempt{}
		byJob[ds[i].Job.ID] = &ds[i]
		ids[i] = ds[i].Job.ID
	}
	rows, err := tx.Query(ctx, attachAttemptsSQL, pgx.StrictNamedArgs{"ids": ids})
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			jobID  uuid.UUID
			millis int64
			a      DeliveryAttempt
		)
		if err := rows.Scan(&jobID, &a.ID, &a.Number, &a.StartedAt, &millis, &a.Outcome, &a.StatusCode, &a.Error, &a.Response); err != nil {
			return err
		}
		a.Duration = time.Duration(millis) * time.Millisecond
		if d := byJob[jobID]; d != nil {
			d.Attempts = append(d.Attempts, a)
		}
	}
	return rows.Err()
}

// JobOfAttempt returns the delivery job an attempt belongs to: the
// X-Lerian-Delivery-Id a receiver saw leads to the delivery. An attempt of
// another tenant's job is an pg.ErrNotFound exactly like a missing one.
func (s *Store) JobOfAttempt(ctx context.Context, tenantID string, attemptID uuid.UUID) (uuid.UUID, error) {
	var jobID uuid.UUID
	err := s.Pool.QueryRow(ctx, jobOfAttemptSQL, pgx.StrictNamedArgs{"attempt_id": attemptID, "tenant_id": tenantID}).Scan(&jobID)
	if err == pgx.ErrNoRows {
		return uuid.Nil, fmt.Errorf("%w: delivery attempt %s", pg.ErrNotFound, attemptID)
	}
	if err != nil {
		return uuid.Nil, pg.Classify(fmt.Errorf("read delivery attempt %s: %w", attemptID, err))
	}
	return jobID, nil
}

//go:embed sql/list_inbox_events.sql
var listInboxEventsSQL string

//go:embed sql/get_inbox_event.sql
var getInboxEventSQL string

//go:embed sql/event_push_deliveries.sql
var eventPushDeliveriesSQL string

//go:embed sql/event_pull_deliveries.sql
var eventPullDeliveriesSQL string

//go:embed sql/attach_attempts.sql
var attachAttemptsSQL string

//go:embed sql/job_of_attempt.sql
var jobOfAttemptSQL string
