// Package opevents stores the hub's operational events (docs/operational-events.md):
// inbox events of a subscription's tenant about that subscription, written
// in the caller's transaction, the one that makes the change they report.
// What an event says and who receives it are the caller's to decide
// (internal/opevents); this package writes them as ingest writes events.
package opevents

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// What every operational event carries (SPEC §11).
const (
	Source          = pg.OperationalSource
	SchemaVersion   = "1.0.0"
	SchemaMajor     = 1
	DataContentType = "application/json"
)

// Event is one operational event to store.
type Event struct {
	ID       uuid.UUID // a UUIDv7
	TenantID string
	Key      string // hub.<event>
	Type     string // the ce type: the type prefix and Key
	// About is the subscription the event reports on; it is also the
	// event's subject, so subject ordering keeps one subscription's
	// events in order.
	About uuid.UUID
	Time  time.Time
	Data  []byte // JSON
	// Relay keeps the event for the relay to the operational topic
	// (STREAMING_HUB_OPERATIONAL_TOPIC) too, in the same transaction.
	Relay bool
}

// Stored is an event with the seq it was given.
type Stored struct {
	Seq int64
	Event
}

// Candidate is a matchable subscription of an event's tenant, as the
// router judges it.
type Candidate struct {
	ID                uuid.UUID
	TenantID          string
	SinkType          string
	Enabled           bool
	VerificationState string
	EventTypes        []string
	SchemaMajor       int
	Origin            string
	Filter            string    // a CEL expression, "" for none
	Version           time.Time // the row's updated_at, which versions its filter
	Ordering          string
}

// Target is one stored event routed to one subscription.
type Target struct {
	SubscriptionID uuid.UUID
	TenantID       string
	Seq            int64
	OrderingKey    *string // nil when the subscription orders nothing
	Pull           bool    // a pull entry, not a delivery job
}

// Router decides which candidates receive which events: the rules of
// matching, and the one more of operational events (never to the
// subscription an event is about). It must not do I/O.
type Router func(events []Stored, candidates []Candidate) []Target

// Write stores events in tx: each an inbox event with a seq drawn under
// ingest's protocol, the delivery jobs and pull entries route gives it,
// and a notification of the new jobs at commit. The caller has taken the
// ingest lock (pg.ShareIngestLock) before locking any row; Write takes
// it again, which costs nothing, so a caller that forgot cannot draw a seq
// without it.
func Write(ctx context.Context, tx pgx.Tx, events []Event, route Router) ([]Stored, error) {
	if len(events) == 0 {
		return nil, nil
	}
	var tenants []string
	for _, e := range events {
		if !slices.Contains(tenants, e.TenantID) {
			tenants = append(tenants, e.TenantID)
		}
	}
	var (
		candidates []Candidate
		seqs       []int64
	)
	pipe := &pgx.Batch{}
	pg.OnExec(pipe.Queue(pg.Inbox.ShareIngestLock, pgx.StrictNamedArgs{"ingest_lock_key": pg.Inbox.IngestLockKey}), "take the ingest lock", nil)
	pg.OnExec(pipe.Queue(pg.Inbox.TakeHorizonBound), "take the horizon bound", nil)
	pg.OnRows(pipe.Queue(pg.Inbox.SelectCandidates, pgx.StrictNamedArgs{"tenants": tenants}), "load subscriptions", func(rows pgx.Rows) (err error) {
		candidates, err = scanCandidates(rows)
		return err
	})
	pg.OnRows(pipe.Queue(pg.Inbox.ReserveSeqs, pgx.StrictNamedArgs{"count": len(events)}), "reserve seqs", func(rows pgx.Rows) (err error) {
		seqs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		return err
	})
	if err := tx.SendBatch(ctx, pipe).Close(); err != nil {
		return nil, fmt.Errorf("write operational events: %w", err)
	}
	if len(seqs) != len(events) {
		return nil, fmt.Errorf("write operational events: got %d seqs for %d events", len(seqs), len(events))
	}
	slices.Sort(seqs)
	stored := make([]Stored, len(events))
	for i, e := range events {
		stored[i] = Stored{Seq: seqs[i], Event: e}
	}
	pipe = &pgx.Batch{}
	queueEvents(pipe, stored)
	queueOutbox(pipe, stored)
	jobs := queueRoutes(pipe, route(stored, candidates))
	if jobs > 0 {
		pipe.Queue(pg.Inbox.NotifyJobs, pgx.StrictNamedArgs{"jobs_channel": pg.JobsChannel})
	}
	if err := tx.SendBatch(ctx, pipe).Close(); err != nil {
		return nil, fmt.Errorf("write operational events: %w", err)
	}
	return stored, nil
}

// queueEvents queues the ids' claim in event_ids and the inbox rows. The
// ids are new UUIDv7s, so none can be taken already; a claim that took
// fewer fails the transaction rather than store an event twice.
func queueEvents(pipe *pgx.Batch, events []Stored) {
	n := len(events)
	var (
		tenants, keys, types = make([]string, n), make([]string, n), make([]string, n)
		ids, subjects        = make([]uuid.UUID, n), make([]string, n)
		seqs                 = make([]int64, n)
		days, times          = make([]time.Time, n), make([]time.Time, n)
		payloads             = make([][]byte, n)
	)
	for i, e := range events {
		tenants[i], ids[i], seqs[i], keys[i], types[i] = e.TenantID, e.ID, e.Seq, e.Key, e.Type
		days[i] = pg.IDDay(e.ID)
		times[i], subjects[i], payloads[i] = e.Time, e.About.String(), e.Data
	}
	pg.OnRows(pipe.Queue(pg.Inbox.ClaimEventIDs, pgx.StrictNamedArgs{"tenants": tenants, "ids": ids, "seqs": seqs, "days": days, "id_day_slot": pg.OperationalIDDaySlot}),
		"claim the events' ids", func(rows pgx.Rows) error {
			taken, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			if err == nil && len(taken) != n {
				err = fmt.Errorf("%d of %d new ids were taken already", n-len(taken), n)
			}
			return err
		})
	pg.OnExec(pipe.Queue(insertEventsSQL, pgx.StrictNamedArgs{
		"seqs": seqs, "tenants": tenants, "ids": ids, "keys": keys, "types": types, "times": times, "subjects": subjects, "payloads": payloads,
		"schema_version": SchemaVersion, "schema_major": SchemaMajor, "source": Source, "datacontenttype": DataContentType,
	}), "insert the events", nil)
}

// queueOutbox keeps the events to relay in the outbox.
func queueOutbox(pipe *pgx.Batch, events []Stored) {
	var (
		seqs                           []int64
		tenants, keys, types, subjects []string
		ids                            []uuid.UUID
		times                          []time.Time
		payloads                       [][]byte
	)
	for _, e := range events {
		if !e.Relay {
			continue
		}
		seqs, tenants, ids, keys, types = append(seqs, e.Seq), append(tenants, e.TenantID), append(ids, e.ID), append(keys, e.Key), append(types, e.Type)
		subjects, times, payloads = append(subjects, e.About.String()), append(times, e.Time), append(payloads, e.Data)
	}
	if len(seqs) == 0 {
		return
	}
	pg.OnExec(pipe.Queue(insertOutboxSQL, pgx.StrictNamedArgs{"seqs": seqs, "tenants": tenants, "ids": ids, "keys": keys, "types": types,
		"subjects": subjects, "times": times, "payloads": payloads}), "keep the events for the operational topic", nil)
}

// queueRoutes queues the jobs and pull entries of targets and returns how
// many jobs.
func queueRoutes(pipe *pgx.Batch, targets []Target) int {
	var (
		jobIDs, jobSubs []uuid.UUID
		jobTenants      []string
		jobSeqs         []int64
		jobKeys         []*string
		pullSubs        []uuid.UUID
		pullSeqs        []int64
	)
	for _, t := range targets {
		if t.Pull {
			pullSubs, pullSeqs = append(pullSubs, t.SubscriptionID), append(pullSeqs, t.Seq)
			continue
		}
		jobIDs = append(jobIDs, uuid.Must(uuid.NewV7()))
		jobSubs, jobTenants = append(jobSubs, t.SubscriptionID), append(jobTenants, t.TenantID)
		jobSeqs, jobKeys = append(jobSeqs, t.Seq), append(jobKeys, t.OrderingKey)
	}
	if len(jobIDs) > 0 {
		pg.OnExec(pipe.Queue(insertJobsSQL, pgx.StrictNamedArgs{"ids": jobIDs, "tenants": jobTenants, "subs": jobSubs, "seqs": jobSeqs, "keys": jobKeys}),
			"create the delivery jobs", nil)
	}
	if len(pullSubs) > 0 {
		pg.OnExec(pipe.Queue(pg.Inbox.QueuePullEntries, pgx.StrictNamedArgs{"pull_subscriptions": pullSubs, "pull_seqs": pullSeqs}),
			"create the pull entries", nil)
	}
	return len(jobIDs)
}

// scanCandidates reads pg.Inbox.SelectCandidates' rows.
func scanCandidates(rows pgx.Rows) ([]Candidate, error) {
	var (
		out         []Candidate
		c           Candidate
		timeoutMS   int32
		rateLimited bool
	)
	_, err := pgx.ForEachRow(rows, []any{&c.ID, &c.TenantID, &c.SinkType, &c.Enabled, &c.VerificationState,
		&c.EventTypes, &c.SchemaMajor, &c.Origin, &c.Filter, &c.Version, &c.Ordering, &timeoutMS, &rateLimited}, func() error {
		out = append(out, c)
		c = Candidate{} // EventTypes must not be shared between rows
		return nil
	})
	return out, err
}

//go:embed sql/insert_events.sql
var insertEventsSQL string

//go:embed sql/insert_outbox.sql
var insertOutboxSQL string

//go:embed sql/insert_jobs.sql
var insertJobsSQL string
