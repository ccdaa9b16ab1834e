package queue

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/filter"
	"github.com/hubctl/hubctl/internal/routing"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// IngestRecord is one Kafka record of a partition batch, with the verdict
// ingest reached without the database: accept (for records that passed rules
// 1–6; rule 7, the duplicate check, happens here), discard or quarantine.
type IngestRecord struct {
	Offset  int64
	Key     []byte // nil when the record has no key
	Headers []event.Header
	// Value is the value as it is stored: for a quarantined record, ingest
	// may keep only its first bytes, and Original then describes the
	// whole value.
	Value   []byte
	Verdict event.Verdict
	// Event is the parsed event when Verdict.Kind is event.Accept.
	Event event.Event
	// Original describes the value the producer sent, for a quarantined
	// record; its zero value means Value is the whole value.
	Original pg.ValueInfo
}

// IngestBatch is what one poll returned for one partition.
type IngestBatch struct {
	Group     string
	Topic     string
	Partition int32
	// TopicID is the Kafka id of the incarnation of Topic the records were
	// fetched from; uuid.Nil when the broker has none. A stored offset of
	// another incarnation does not apply to the batch (StoredOffset).
	TopicID uuid.UUID
	// Records in ascending offset order. Offsets may have gaps: compacted
	// records, transaction markers.
	Records []IngestRecord
	// NextOffset is the offset to read after this batch: the last record's
	// offset + 1.
	NextOffset int64
	// ReceivedAt, when set, is stored as the batch's received_at (events
	// and quarantine); zero takes the database's clock.
	ReceivedAt time.Time
	// Handoff, when set, is the dispatcher of this process that the first
	// attempts of the batch's jobs may be leased to (see Handoff).
	Handoff Handoff
	// Route decides where the batch's new events go, among the candidate
	// subscriptions the write reads for the batch's tenants in its
	// transaction; ingest passes match.Router under its filter limits.
	// Required when a record is accepted.
	Route routing.Router
}

// IngestResult says what WriteIngestBatch did with a batch.
type IngestResult struct {
	// NextOffset is the partition's stored next offset after the call. It
	// is larger than the batch's NextOffset when an earlier writer already
	// stored records beyond this batch; the consumer should resume there.
	NextOffset int64
	// Skipped counts the leading records an earlier writer (a previous
	// owner of the partition that crashed before its Kafka commit, or one
	// still running after a rebalance) had already stored. They were
	// neither written nor judged again.
	Skipped int
	// Verdicts are the final verdicts of Records[Skipped:], in order: an
	// accepted record whose (tenant, id) the inbox already held, or that
	// repeats an earlier record of the batch, became a duplicate discard.
	Verdicts []event.Verdict
	// Jobs and PullEntries count the delivery work matching created.
	Jobs        int
	PullEntries int
	// HandedOver counts the jobs leased to the batch's Handoff.
	HandedOver int
	// FilterFailures are the content filters that failed on a new event;
	// each push subscription's is stored as a filter_error dead letter.
	FilterFailures []routing.FilterFailure
	// OtherIncarnation reports that nothing was written: the partition's
	// stored position belongs to another incarnation of the topic than the
	// batch's. The batch was fetched from a topic since deleted and created
	// again (ingest moved the position to the new one when it was
	// assigned), and its offsets say nothing about the new log.
	OtherIncarnation bool
}

// VerdictCount is one line of IngestResult.Counts.
type VerdictCount struct {
	Kind   event.Kind
	Reason event.Reason
	Count  int
}

// Counts tallies Verdicts by kind and reason, in order of first appearance.
func (r IngestResult) Counts() []VerdictCount {
	var counts []VerdictCount
next:
	for _, v := range r.Verdicts {
		for i := range counts {
			if counts[i].Kind == v.Kind && counts[i].Reason == v.Reason {
				counts[i].Count++
				continue next
			}
		}
		counts = append(counts, VerdictCount{Kind: v.Kind, Reason: v.Reason, Count: 1})
	}
	return counts
}

// WriteIngestBatch stores one partition batch in ONE transaction (docs/concepts.md, Consume-once):
// the accepted events that are new to the inbox, the quarantined records, the
// delivery jobs and pull entries that matching creates for the new events, and
// the partition's next offset. The caller commits the offset to Kafka only
// after this returns nil.
//
// The stored offset makes the write idempotent per stream position: records
// below it were stored by an earlier writer and are skipped, so a batch
// replayed after a lost Kafka commit, or written by a consumer that lost the
// partition in a rebalance, stores nothing twice. Errors are classified;
// pg.IsUnavailable(err) means the caller should retry the same batch later.
func (s *Store) WriteIngestBatch(ctx context.Context, b IngestBatch) (IngestResult, error) {
	if err := b.validate(); err != nil {
		return IngestResult{}, err
	}
	var (
		res    IngestResult
		handed handoffPlan
	)
	err := pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		handed.cancel() // a transaction tried again plans afresh
		var err error
		res, handed, err = writeIngestBatch(ctx, tx, b)
		return err
	})
	if err != nil {
		handed.cancel()
		return IngestResult{}, err
	}
	handed.take()
	return res, nil
}

func (b IngestBatch) validate() error {
	last := int64(-1)
	for _, r := range b.Records {
		if r.Offset <= last {
			return fmt.Errorf("ingest batch %s/%d: offsets not ascending (%d after %d)", b.Topic, b.Partition, r.Offset, last)
		}
		last = r.Offset
		if b.Route == nil && r.Verdict.Kind == event.Accept {
			return fmt.Errorf("ingest batch %s/%d: an accepted record and no Route to decide its deliveries", b.Topic, b.Partition)
		}
	}
	if b.NextOffset <= last || b.NextOffset < 0 {
		return fmt.Errorf("ingest batch %s/%d: next offset %d is not past the last record %d", b.Topic, b.Partition, b.NextOffset, last)
	}
	return nil
}

// writeIngestBatch is WriteIngestBatch inside its transaction. The plan it
// returns holds room reserved in b.Handoff; a failure after
// planning gives that room back before returning.
func writeIngestBatch(ctx context.Context, tx pgx.Tx, b IngestBatch) (IngestResult, handoffPlan, error) {
	// Rule 7 inside the batch: the first record with a (tenant, id) is the
	// one the inbox may take, later ones are duplicates whatever the inbox
	// holds.
	candidates, tenants := firstOfEachEvent(b.Records)
	state, err := lockAndLoad(ctx, tx, b, candidates, tenants)
	if err != nil {
		return IngestResult{}, handoffPlan{}, err
	}
	if !state.stored.SameIncarnation(b.TopicID) {
		return IngestResult{NextOffset: state.stored.Next, OtherIncarnation: true}, handoffPlan{}, nil
	}
	skipped := countBelow(b.Records, state.stored.Next)
	if state.stored.Next >= b.NextOffset {
		return IngestResult{NextOffset: state.stored.Next, Skipped: skipped}, handoffPlan{}, nil
	}

	var unwritten []int // candidates at or past the stored offset
	for _, i := range candidates {
		if b.Records[i].Offset >= state.stored.Next {
			unwritten = append(unwritten, i)
		}
	}
	inserted, err := insertEvents(ctx, tx, b, unwritten, state.seqs)
	if err != nil {
		return IngestResult{}, handoffPlan{}, err
	}

	res := IngestResult{NextOffset: b.NextOffset, Skipped: skipped}
	res.Verdicts = finalVerdicts(b.Records[skipped:], inserted)
	var routes routing.Routes
	if len(inserted) > 0 {
		routes = b.Route(newEvents(b.Records, inserted), state.subs)
	}
	res.FilterFailures = routes.FilterFailures
	work := deliveryWorkOf(routes, b.ReceivedAt)
	res.Jobs, res.PullEntries = len(work.jobs), len(work.pullSubscriptions)
	handed := planHandoff(b.Handoff, &work, routes.Jobs, state, b.Records, inserted, b.ReceivedAt)
	res.HandedOver = len(handed.jobs)
	if len(work.jobs) > 0 {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"delivery_jobs"}, jobColumns, pgx.CopyFromRows(work.jobs)); err != nil {
			handed.cancel()
			return IngestResult{}, handoffPlan{}, fmt.Errorf("create delivery jobs of %s/%d: %w", b.Topic, b.Partition, err)
		}
	}

	pipe := &pgx.Batch{}
	work.queuePullEntries(pipe)
	queueFilterDeadLetters(pipe, routes.FilterFailures, b.ReceivedAt)
	queueQuarantine(pipe, b, skipped)
	pipe.Queue(storeOffset, pgx.StrictNamedArgs{
		"consumer_group": b.Group, "topic": b.Topic, "kafka_partition": b.Partition,
		"next_offset": b.NextOffset, "topic_id": nullableTopicID(b.TopicID),
	})
	if len(work.jobs) > len(handed.jobs) {
		pg.QueueJobsNotify(pipe)
	}
	if err := tx.SendBatch(ctx, pipe).Close(); err != nil {
		handed.cancel()
		return IngestResult{}, handoffPlan{}, fmt.Errorf("write ingest batch %s/%d: %w", b.Topic, b.Partition, err)
	}
	return res, handed, nil
}

// eventRef is an event's identity in the inbox.
type eventRef struct{ tenant, id string }

// firstOfEachEvent picks the accepted records the inbox may take, by index:
// the first of each (tenant, id) in the batch. It also lists their tenants.
func firstOfEachEvent(records []IngestRecord) (candidates []int, tenants []string) {
	seen := make(map[eventRef]bool)
	seenTenant := make(map[string]bool)
	for i, r := range records {
		if r.Verdict.Kind != event.Accept {
			continue
		}
		ref := eventRef{r.Event.TenantID, r.Event.ID}
		if seen[ref] {
			continue
		}
		seen[ref] = true
		candidates = append(candidates, i)
		if !seenTenant[r.Event.TenantID] {
			seenTenant[r.Event.TenantID] = true
			tenants = append(tenants, r.Event.TenantID)
		}
	}
	return candidates, tenants
}

// ingestState is what a batch write reads once it holds its locks.
type ingestState struct {
	stored StoredOffset // the partition's stored position; offset 0 when none
	subs   map[string][]routing.Candidate
	seqs   []int64                     // one reserved seq per candidate, ascending
	leases map[[16]byte]candidateLease // by subscription, of every candidate
	// blockedTenants are the batch's tenants with a due pending job, read
	// only for a batch with a Handoff (planHandoff).
	blockedTenants map[string]bool
}

// lockAndLoad takes the batch's locks, then reads the partition's stored
// offset and the candidate subscriptions of the batch's tenants, and
// reserves a seq per candidate. The statements travel in one round trip;
// each runs after the one before it with its own snapshot.
//
// Batches of different partitions run at once (docs/architecture.md,
// "Parallel ingest"): instead of one global lock, four narrow promises
// keep them apart:
//
//   - The ingest lock, shared: every batch holds it, so the few operations
//     that must see no batch in progress (moving the sequence to a new
//     day, dropping a day of event ids, purging a tenant) take it
//     exclusively and wait for the batches in hand.
//   - The horizon bound (migration 000012, ingest_horizon): seqs are handed
//     out when asked, not at commit, so two batches can commit in the
//     opposite order of their seqs. Before drawing any seq a batch holds a
//     shared lock keyed by a bound below every seq it will draw; readers
//     that must never skip a row committing later with a lower seq (pull
//     reads, ordered claims) read only below the lowest bound held.
//   - The partition's offset row, locked FOR UPDATE (inserted first when
//     the partition has none, so there is always a row to lock): two
//     writers of one partition (an old owner and a new one after a
//     rebalance) take turns, and the second finds the first's offset and
//     skips what it stored.
//   - The duplicate check is event_ids' unique index: a batch inserting an
//     id another batch holds uncommitted waits for it (ids are inserted in
//     one sorted order, so two batches cannot wait for each other).
func lockAndLoad(ctx context.Context, tx pgx.Tx, b IngestBatch, candidates []int, tenants []string) (st ingestState, err error) {
	var topicID uuid.NullUUID
	pipe := &pgx.Batch{}
	pg.OnExec(pipe.Queue(shareIngestLockSQL, pgx.StrictNamedArgs{"ingest_lock_key": pg.IngestLockKey}), "take the ingest lock", nil)
	where := fmt.Sprintf("%s/%d", b.Topic, b.Partition)
	pg.OnExec(pipe.Queue(ensureStoredOffsetSQL, pgx.StrictNamedArgs{"group": b.Group, "topic": b.Topic, "partition": b.Partition, "nullable_topic_id": nullableTopicID(b.TopicID)}),
		"lock the stored offset of "+where, nil)
	pg.OnRow(pipe.Queue(lockStoredOffsetSQL, pgx.StrictNamedArgs{"group": b.Group, "topic": b.Topic, "partition": b.Partition}),
		"read stored offset of "+where, func(row pgx.Row) error { return row.Scan(&st.stored.Next, &topicID) })
	if len(candidates) > 0 {
		pg.OnExec(pipe.Queue(takeHorizonBound), "take the horizon bound", nil)
		pg.OnRows(pipe.Queue(selectCandidates, pgx.StrictNamedArgs{"tenants": tenants}), "load subscriptions", func(rows pgx.Rows) (err error) {
			st.subs, st.leases, err = scanCandidates(rows)
			return err
		})
		pg.OnRows(pipe.Queue(reserveSeqs, pgx.StrictNamedArgs{"count": len(candidates)}), "reserve seqs", func(rows pgx.Rows) (err error) {
			st.seqs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
			return err
		})
		if b.Handoff != nil {
			pg.OnRows(pipe.Queue(selectBlockedTenants, pgx.StrictNamedArgs{"tenants": tenants}), "read the tenants with due jobs", func(rows pgx.Rows) error {
				blocked, err := pgx.CollectRows(rows, pgx.RowTo[string])
				st.blockedTenants = make(map[string]bool, len(blocked))
				for _, t := range blocked {
					st.blockedTenants[t] = true
				}
				return err
			})
		}
	}
	if err := tx.SendBatch(ctx, pipe).Close(); err != nil {
		return ingestState{}, err
	}
	st.stored.TopicID = topicID.UUID
	if len(st.seqs) != len(candidates) {
		return ingestState{}, fmt.Errorf("reserve seqs: got %d for %d events", len(st.seqs), len(candidates))
	}
	// nextval answers in the order the rows are made; sorting keeps the
	// promise seq follows offset order without relying on it.
	slices.Sort(st.seqs)
	return st, nil
}

// takeHorizonBound holds, until the transaction ends, the shared lock that
// ingest_horizon reads: keyed by -2^62 + the sequence's next value, which
// no seq this transaction draws afterwards can be below.
var takeHorizonBound = pg.Inbox.TakeHorizonBound

// reserveSeqs draws one seq per candidate. Each draw is a nextval of its
// own: concurrent batches draw from the same sequence, and a run of seqs
// moved on in one step could hand the same numbers to two of them.
var reserveSeqs = pg.Inbox.ReserveSeqs

// countBelow counts the records below offset; records are ascending.
func countBelow(records []IngestRecord, offset int64) int {
	n := 0
	for n < len(records) && records[n].Offset < offset {
		n++
	}
	return n
}

// insertEvents copies the candidate events into the inbox, giving them the
// reserved seqs in offset order so seq follows the partition's order
// (docs/concepts.md, Ordering), and returns the seq of each new event by offset.
//
// The rest of rule 7 — candidates the inbox already holds are duplicates —
// is event_ids' job: it holds the (tenant, id) of every retained event,
// unique across its partitions (docs/architecture.md, "Storage
// lifecycle"). One statement claims the candidates' ids, skipping those
// already held, and returns the new ones; only their events are copied,
// each with the seq its id was claimed under (a duplicate leaves a gap in
// seq, which only has to increase). The same statement keeps event_id_days,
// which retention reads to know when a day of ids may go.
func insertEvents(ctx context.Context, tx pgx.Tx, b IngestBatch, candidates []int, reserved []int64) (map[int64]int64, error) {
	if len(candidates) == 0 {
		return nil, nil
	}
	// Ids go to PostgreSQL as 16 bytes: pgx has no binary encoding of a
	// string as a uuid, and failing to find one costs it an error that
	// prints the whole value before it falls back to text, once per event
	// in the COPY and once per batch, over every id, in claimEventIDs.
	tenants, ids := make([]string, len(candidates)), make([][16]byte, len(candidates))
	seqs, days := make([]int64, len(candidates)), make([]time.Time, len(candidates))
	for k, i := range candidates {
		ev := &b.Records[i].Event
		id, err := uuid.Parse(ev.ID)
		if err != nil {
			return nil, fmt.Errorf("event id %q of %s/%d@%d: %w", ev.ID, b.Topic, b.Partition, b.Records[i].Offset, err)
		}
		tenants[k], ids[k], seqs[k], days[k] = ev.TenantID, id, reserved[k], pg.IDDay(id) // a parsed event's id is a UUIDv7
	}
	rows, err := tx.Query(ctx, claimEventIDs, pgx.StrictNamedArgs{"tenants": tenants, "ids": ids, "seqs": seqs, "days": days, "id_day_slot": idDaySlot(b.Topic, b.Partition)})
	if err != nil {
		return nil, fmt.Errorf("check events of %s/%d for duplicates: %w", b.Topic, b.Partition, err)
	}
	fresh := make(map[int64]bool, len(candidates))
	var seq int64
	if _, err := pgx.ForEachRow(rows, []any{&seq}, func() error { fresh[seq] = true; return nil }); err != nil {
		return nil, fmt.Errorf("check events of %s/%d for duplicates: %w", b.Topic, b.Partition, err)
	}
	src := &eventSource{batch: &b, receivedAt: b.ReceivedAt}
	inserted := make(map[int64]int64, len(fresh))
	for k, i := range candidates {
		if fresh[seqs[k]] {
			src.candidates, src.seqs, src.ids = append(src.candidates, i), append(src.seqs, seqs[k]), append(src.ids, ids[k])
			inserted[b.Records[i].Offset] = seqs[k]
		}
	}
	if len(src.candidates) == 0 {
		return inserted, nil
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"events"}, src.columns(), src); err != nil {
		return nil, fmt.Errorf("insert events of %s/%d: %w", b.Topic, b.Partition, err)
	}
	return inserted, nil
}

// claimEventIDs takes the ids of a batch's candidate events that no
// retained event has (@tenants, @ids, @seqs the seqs reserved for them,
// @days each id's UTC day, @id_day_slot the batch's idDaySlot) and returns the seqs of
// those it took. Ids go in in one order, whatever the batch's, so two
// batches that share ids wait for each other in turn, never in a circle.
var claimEventIDs = pg.Inbox.ClaimEventIDs

// idDaySlot is the event_id_days row a partition's batches keep.
var idDaySlot = pg.IDDaySlot

// finalVerdicts applies rule 7's outcome to the pre-database verdicts: an
// accepted record the inbox did not take is a duplicate, of a stored event or
// of an earlier record of the batch.
func finalVerdicts(records []IngestRecord, inserted map[int64]int64) []event.Verdict {
	out := make([]event.Verdict, len(records))
	for i, r := range records {
		v := r.Verdict
		if v.Kind == event.Accept {
			if _, isNew := inserted[r.Offset]; !isNew {
				v = event.Duplicate()
			}
		}
		out[i] = v
	}
	return out
}

// filters holds the compiled content filters of the subscriptions ingest
// has matched against, per version. Subscription ids are unique across
// databases (UUIDv7), so one cache serves every Store of the process.
var filters = filter.NewCache()

// selectCandidates narrows by what the partial index subscriptions_matchable
// covers; the batch's Route makes the decision.
var selectCandidates = pg.Inbox.SelectCandidates

func scanCandidates(rows pgx.Rows) (map[string][]routing.Candidate, map[[16]byte]candidateLease, error) {
	subs := make(map[string][]routing.Candidate)
	leases := make(map[[16]byte]candidateLease)
	var c routing.Candidate
	var (
		sinkType, expr string
		lease          candidateLease
		timeoutMS      int32
	)
	_, err := pgx.ForEachRow(rows, []any{&c.ID, &c.TenantID, &sinkType, &c.Enabled, &c.VerificationState,
		&c.EventTypes, &c.SchemaMajor, &c.Origin, &expr, &lease.version, &c.Ordering, &timeoutMS, &lease.rateLimited}, func() error {
		c.Pull = sinkType == "pull"
		if expr != "" {
			c.Filter, c.FilterErr = filters.Program(c.ID, lease.version, expr)
		}
		subs[c.TenantID] = append(subs[c.TenantID], c)
		lease.attemptTimeout = time.Duration(timeoutMS) * time.Millisecond
		leases[c.ID] = lease
		c = routing.Candidate{} // EventTypes must not be shared between rows
		return nil
	})
	return subs, leases, err
}

// deliveryWork is what matching produced: delivery job rows for COPY, and
// parallel columns of pull entries for unnest.
type deliveryWork struct {
	jobs              [][]any // jobColumns
	pullSubscriptions [][16]byte
	pullSeqs          []int64
}

// jobColumns are the delivery_jobs columns ingest sets; next_attempt_at
// takes its default: due at the moment of the insert by the database's
// clock (which dispatch compares against). Within a partition that moment
// follows seq order; across partitions written at once it may not, which
// only changes which of two simultaneous events is attempted first
// (docs/concepts.md, Ordering). ordering_key is NULL for subscriptions
// without ordering. A job is pending, or in flight when handed over
// (planHandoff sets its state and lease).
var jobColumns = []string{"id", "tenant_id", "subscription_id", "event_seq", "ordering_key", "state", "lease_owner", "lease_until"}

// newEvents lists the events the inbox took, in offset (and so seq) order,
// as matching sees them.
func newEvents(records []IngestRecord, inserted map[int64]int64) []routing.NewEvent {
	events := make([]routing.NewEvent, 0, len(inserted))
	for _, r := range records {
		seq, isNew := inserted[r.Offset]
		if !isNew {
			continue
		}
		ev := &r.Event
		events = append(events, routing.NewEvent{Seq: seq, Event: routing.Event{
			TenantID: ev.TenantID, Key: ev.Key, SchemaMajor: ev.SchemaMajor, Source: ev.Source,
		}, Attributes: filter.Event{
			ID: ev.ID, Source: ev.Source, Key: ev.Key, Type: ev.Type, Subject: ev.Subject, Time: ev.Time,
			SchemaVersion: ev.SchemaVersion, TenantID: ev.TenantID, DataContentType: ev.DataContentType, Data: ev.Data,
		}})
	}
	return events
}

// deliveryWorkOf lays matching's routes out for the writes: a new job id
// per delivery job, in route order, of the batch's time (zero: now).
func deliveryWorkOf(r routing.Routes, at time.Time) deliveryWork {
	var w deliveryWork
	if len(r.Jobs) > 0 {
		w.jobs = make([][]any, len(r.Jobs))
		for i, j := range r.Jobs {
			w.jobs[i] = []any{newJobID(at), j.TenantID, j.SubscriptionID, j.Seq, j.OrderingKey, "pending", nil, nil}
		}
	}
	for _, p := range r.Pull {
		w.pullSubscriptions = append(w.pullSubscriptions, p.SubscriptionID)
		w.pullSeqs = append(w.pullSeqs, p.Seq)
	}
	return w
}

func (w deliveryWork) queuePullEntries(pipe *pgx.Batch) {
	if len(w.pullSubscriptions) > 0 {
		pipe.Queue(queuePullEntriesSQL,
			pgx.StrictNamedArgs{"pull_subscriptions": w.pullSubscriptions, "pull_seqs": w.pullSeqs})
	}
}

// queueFilterDeadLetters keeps each event a push subscription's filter
// failed on as a dead letter of that subscription (pg.DeadFilterError), with
// the failure in last_error: replayed once the filter is fixed, it is
// delivered like any other job. A pull subscription has no dead letters;
// its failures are only counted and logged by the caller.
func queueFilterDeadLetters(pipe *pgx.Batch, failures []routing.FilterFailure, at time.Time) {
	var (
		ids, subs [][16]byte
		tenants   []string
		seqs      []int64
		keys      []*string
		errs      []string
	)
	for _, f := range failures {
		if f.Pull {
			continue
		}
		ids, subs = append(ids, newJobID(at)), append(subs, f.SubscriptionID)
		tenants, seqs, keys = append(tenants, f.TenantID), append(seqs, f.Seq), append(keys, f.OrderingKey)
		errs = append(errs, "filter "+f.Reason+": "+f.Error)
	}
	if len(ids) == 0 {
		return
	}
	pipe.Queue(queueFilterDeadLettersSQL,
		pgx.StrictNamedArgs{"ids": ids, "tenants": tenants, "subs": subs, "seqs": seqs, "keys": keys, "errs": errs, "reason": pg.DeadFilterError, "dead_at": pg.NullIfZero(at)})
}

// queueQuarantine stores the raw quarantined records past the skipped
// prefix. The stored offset keeps a stream position from being processed
// twice; a topic deleted and recreated reuses offsets, and its poison
// records are kept beside the old ones.
func queueQuarantine(pipe *pgx.Batch, b IngestBatch, skipped int) {
	for _, r := range b.Records[skipped:] {
		if r.Verdict.Kind != event.Quarantine {
			continue
		}
		keys, values := headerColumns(r.Headers)
		original := r.Original
		if original.SHA256 == nil {
			sum := sha256.Sum256(r.Value)
			original = pg.ValueInfo{Size: int64(len(r.Value)), SHA256: sum[:]}
		}
		pipe.Queue(queueQuarantineSQL,
			pgx.StrictNamedArgs{"reason": string(r.Verdict.Reason), "detail": r.Verdict.Detail, "topic": b.Topic, "partition": b.Partition, "offset": r.Offset, "key": r.Key, "keys": keys, "values": values, "value": notNull(r.Value), "size": original.Size, "sha256": original.SHA256, "truncated": original.Truncated, "received_at": pg.NullIfZero(b.ReceivedAt)})
	}
}

// eventColumns are the events columns ingest writes; received_at takes its
// default unless the batch says when it was received.
var eventColumns = []string{
	"seq", "tenant_id", "id", "event_key", "schema_version", "schema_major", "source", "type", "time",
	"subject", "datacontenttype", "dataschema", "traceparent", "tracestate", "header_keys", "header_values", "header_derived", "payload",
	"topic", "kafka_partition", "kafka_offset",
}

var eventColumnsReceived = append(slices.Clip(eventColumns), "received_at")

// eventSource feeds candidate events to COPY, each with its seq, without
// building every row up front; the row slice is reused, which pgx allows
// because it encodes each row before asking for the next. The header
// arrays go as pgtype.FlatArray: pgx encodes a [][]byte through
// reflection, a third slower.
type eventSource struct {
	batch      *IngestBatch
	candidates []int // indexes into batch.Records
	seqs       []int64
	ids        [][16]byte // each candidate's event id
	receivedAt time.Time
	next       int
	row        []any
}

func (s *eventSource) columns() []string {
	if s.receivedAt.IsZero() {
		return eventColumns
	}
	return eventColumnsReceived
}

func (s *eventSource) Next() bool {
	s.next++
	return s.next <= len(s.candidates)
}

func (s *eventSource) Values() ([]any, error) {
	k := s.next - 1
	r := &s.batch.Records[s.candidates[k]]
	ev := &r.Event
	keys, values := headerColumns(r.Headers)
	derived := event.DerivedHeaders(ev.Stored(), r.Headers)
	for i := range values {
		if i < event.MaxDerivedHeaders && derived&(1<<i) != 0 {
			values[i] = nil // the attribute columns hold it
		}
	}
	s.row = append(s.row[:0],
		s.seqs[k], ev.TenantID, s.ids[k], ev.Key, ev.SchemaVersion, int32(ev.SchemaMajor), ev.Source, ev.Type, ev.Time,
		pg.NullIfZero(ev.Subject), pg.NullIfZero(ev.DataContentType), pg.NullIfZero(ev.DataSchema), pg.NullIfZero(ev.TraceParent), pg.NullIfZero(ev.TraceState),
		pgtype.FlatArray[[]byte](keys), pgtype.FlatArray[[]byte](values), pg.NullIfZero(int64(derived)), notNull(ev.Data),
		s.batch.Topic, s.batch.Partition, r.Offset)
	if !s.receivedAt.IsZero() {
		s.row = append(s.row, s.receivedAt)
	}
	return s.row, nil
}

func (s *eventSource) Err() error { return nil }

// headerColumns splits headers into the parallel bytea[] columns. Keys are
// copied into one buffer: Kafka header keys are strings on the client but
// bytes on the wire, and the column keeps them as bytes.
func headerColumns(headers []event.Header) (keys, values [][]byte) {
	size := 0
	for _, h := range headers {
		size += len(h.Key)
	}
	buf := make([]byte, 0, size)
	keys = make([][]byte, len(headers))
	values = make([][]byte, len(headers))
	for i, h := range headers {
		start := len(buf)
		buf = append(buf, h.Key...)
		keys[i] = buf[start:len(buf):len(buf)]
		values[i] = h.Value // a null header value stays a NULL element
	}
	return keys, values
}

// notNull keeps an empty record value an empty bytea: pgx sends a nil slice
// as NULL, which the NOT NULL columns would refuse.
func notNull(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// newJobID returns a UUIDv7 of the time at, which names the day partition
// the job lives in (migration 8). google/uuid's are strictly increasing
// within the process (RFC 9562 §6.2), so new jobs go to the right edge of
// the primary key's index, the cheapest place to insert; a batch stored at
// an injected time gets that time's milliseconds instead, and keeps the
// rest of the id.
func newJobID(at time.Time) [16]byte {
	id := uuid.Must(uuid.NewV7())
	if at.IsZero() {
		return id
	}
	ms := uint64(at.UnixMilli())
	for i := range 6 {
		id[i] = byte(ms >> (40 - 8*i))
	}
	return id
}

var shareIngestLockSQL = pg.Inbox.ShareIngestLock

//go:embed sql/ensure_stored_offset.sql
var ensureStoredOffsetSQL string

//go:embed sql/lock_stored_offset.sql
var lockStoredOffsetSQL string

var queuePullEntriesSQL = pg.Inbox.QueuePullEntries

//go:embed sql/queue_filter_dead_letters.sql
var queueFilterDeadLettersSQL string

//go:embed sql/queue_quarantine.sql
var queueQuarantineSQL string
