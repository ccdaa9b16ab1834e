package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// InboxStatements are ingest's own statements for a writer of inbox rows
// other than ingest (store/opevents): a row's seq must be drawn under the
// same protocol (docs/architecture.md, "Parallel ingest; readers stop at
// the horizon"), or pull readers and ordered claims skip it. One protocol,
// one copy of its statements.
type InboxStatements struct {
	// ShareIngestLock takes the ingest lock shared (@ingest_lock_key is
	// IngestLockKey); TakeHorizonBound then holds the horizon bound until
	// the transaction ends. Both before ReserveSeqs (@count).
	ShareIngestLock, TakeHorizonBound, ReserveSeqs string
	// ClaimEventIDs takes events' ids in event_ids (@tenants, @ids, @seqs,
	// @days, @id_day_slot) and returns the seqs of those it took.
	ClaimEventIDs string
	// QueuePullEntries creates pull entries (@pull_subscriptions,
	// @pull_seqs); NotifyJobs wakes the dispatchers (@jobs_channel is
	// JobsChannel).
	QueuePullEntries, NotifyJobs string
	// SelectCandidates reads the matchable subscriptions of @tenants, in
	// the columns scanCandidates reads.
	SelectCandidates string
	IngestLockKey    int64
}

// Inbox is the protocol's statements.
var Inbox = InboxStatements{
	ShareIngestLock: shareIngestLockSQL, TakeHorizonBound: takeHorizonBound, ReserveSeqs: reserveSeqs,
	ClaimEventIDs: claimEventIDs, QueuePullEntries: queuePullEntriesSQL,
	NotifyJobs: notifyJobsSQL, SelectCandidates: selectCandidates, IngestLockKey: ingestLockKey,
}

// OperationalIDDaySlot is the event_id_days row of the hub's own events:
// a slot of its own name, as a partition's batches have theirs.
var OperationalIDDaySlot = idDaySlot("hubctl.operational", 0)

// ShareIngestLock takes the ingest lock shared in tx. A transaction that
// will write inbox rows takes it before any row lock: the operations
// holding it exclusively (a tenant purge) lock rows after it, so taken
// later it could close a circle with them.
func ShareIngestLock(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, shareIngestLockSQL, pgx.StrictNamedArgs{"ingest_lock_key": ingestLockKey})
	return err
}
