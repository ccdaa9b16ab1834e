package pg

import (
	"context"
	_ "embed"
	"hash/fnv"

	"github.com/jackc/pgx/v5"
)

// InboxStatements are ingest's own statements for a writer of inbox rows:
// ingest (store/queue) and the hub's operational events (store/opevents).
// A row's seq must be drawn under the same protocol (docs/architecture.md,
// "Parallel ingest; readers stop at the horizon"), or pull readers and
// ordered claims skip it. One protocol, one copy of its statements.
type InboxStatements struct {
	// ShareIngestLock takes the ingest lock shared (@ingest_lock_key is
	// IngestLockKey); TakeHorizonBound then holds, until the transaction
	// ends, the shared lock that ingest_horizon reads: keyed by -2^62 +
	// the sequence's next value, which no seq this transaction draws
	// afterwards can be below. Both before ReserveSeqs.
	ShareIngestLock, TakeHorizonBound string
	// ReserveSeqs draws @count seqs. Each draw is a nextval of its own:
	// concurrent batches draw from the same sequence, and a run of seqs
	// moved on in one step could hand the same numbers to two of them.
	ReserveSeqs string
	// ClaimEventIDs takes the ids of candidate events that no retained
	// event has (@tenants, @ids, @seqs the seqs reserved for them, @days
	// each id's UTC day, @id_day_slot the writer's IDDaySlot) and returns
	// the seqs of those it took. Ids go in in one order, whatever the
	// batch's, so two batches that share ids wait for each other in turn,
	// never in a circle.
	ClaimEventIDs string
	// QueuePullEntries creates pull entries (@pull_subscriptions,
	// @pull_seqs); NotifyJobs wakes the dispatchers (@jobs_channel is
	// JobsChannel).
	QueuePullEntries, NotifyJobs string
	// SelectCandidates reads the matchable subscriptions of @tenants: it
	// narrows by what the partial index subscriptions_matchable covers;
	// the writer's routing makes the decision.
	SelectCandidates string
	IngestLockKey    int64
}

// Inbox is the protocol's statements.
var Inbox = InboxStatements{
	ShareIngestLock: shareIngestLockSQL, TakeHorizonBound: takeHorizonBoundSQL, ReserveSeqs: reserveSeqsSQL,
	ClaimEventIDs: claimEventIDsSQL, QueuePullEntries: queuePullEntriesSQL,
	NotifyJobs: notifyJobsSQL, SelectCandidates: selectCandidatesSQL, IngestLockKey: IngestLockKey,
}

// OperationalSource is the source of the hub's own operational events
// (docs/operational-events.md), whose subject is the subscription they
// are about.
const OperationalSource = "hubctl"

// idDaySlots is how many rows of event_id_days a day has at most: batches
// of partitions in different slots never wait for each other's row.
const idDaySlots = 64

// IDDaySlot is the event_id_days row a partition's batches keep.
func IDDaySlot(topic string, partition int32) int32 {
	h := fnv.New32a()
	h.Write([]byte(topic))
	return int32((h.Sum32() + uint32(partition)) % idDaySlots)
}

// OperationalIDDaySlot is the event_id_days row of the hub's own events:
// a slot of its own name, as a partition's batches have theirs.
var OperationalIDDaySlot = IDDaySlot("hubctl.operational", 0)

// ShareIngestLock takes the ingest lock shared in tx. A transaction that
// will write inbox rows takes it before any row lock: the operations
// holding it exclusively (a tenant purge) lock rows after it, so taken
// later it could close a circle with them.
func ShareIngestLock(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, shareIngestLockSQL, pgx.StrictNamedArgs{"ingest_lock_key": IngestLockKey})
	return err
}

//go:embed sql/share_ingest_lock.sql
var shareIngestLockSQL string

//go:embed sql/take_horizon_bound.sql
var takeHorizonBoundSQL string

//go:embed sql/reserve_seqs.sql
var reserveSeqsSQL string

//go:embed sql/claim_event_ids.sql
var claimEventIDsSQL string

//go:embed sql/queue_pull_entries.sql
var queuePullEntriesSQL string

//go:embed sql/select_candidates.sql
var selectCandidatesSQL string
