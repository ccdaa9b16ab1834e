package pg

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The layout of the partitioned tables (migration 3; docs/architecture.md,
// "Storage lifecycle"). Every daily partition covers one UTC day:
//
//   - events and pull_entries by seq: day D owns the seqs from
//     DaySeqBase(D) up to the next day's base. The maintainer moves the
//     sequence into the day's range when the day starts, so a lookup by seq
//     touches one partition, and ingest's hot path is unchanged.
//   - event_ids and delivery_jobs by id: day D owns the UUIDv7s whose
//     time falls on D (for a job, the day it was created).
//   - attempts and quarantine by a timestamp.
//
// Tables with a timestamp or id key also have a default partition, for rows
// whose key falls outside every daily one (a clock far off, a maintainer
// that has not run): nothing is ever refused for want of a partition.

// SeqDayBits sizes a day's range of seqs: 2^36 (~69 billion, ~795k events/s
// for a whole day). A busier day spills into the next day's range, which
// exists ahead of time, and nothing breaks. The epoch keeps seqs below
// 2^53, so JSON readers that hold numbers as doubles read them exactly,
// until the 2350s.
const SeqDayBits = 36

var seqEpoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

// ReceivedAtSkew is how much older than an event of a lower seq an event's
// received_at may be: received_at is its ingest transaction's start, and
// batches written at once draw their seqs in any order of their starts (a
// batch waiting for its partition's offset row draws after one that
// started later). So an event received at t proves every higher seq
// received after t - ReceivedAtSkew: recover and the deliveries' until
// bound both rest on it.
const ReceivedAtSkew = 10 * time.Minute

// DayStart is the UTC midnight at or before t.
func DayStart(t time.Time) time.Time {
	u := t.UTC()
	return time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
}

// DaySeqBase is the first seq of the UTC day of t.
func DaySeqBase(t time.Time) int64 {
	return int64(DayStart(t).Sub(seqEpoch)/day) << SeqDayBits
}

// UUIDAt is the smallest UUIDv7 of the millisecond t.
func UUIDAt(t time.Time) string {
	ms := uint64(t.UnixMilli())
	return fmt.Sprintf("%08x-%04x-0000-0000-000000000000", ms>>16, ms&0xffff)
}

// IDDay is the UTC day of a UUIDv7's own time (its first 48 bits, Unix
// milliseconds).
func IDDay(id [16]byte) time.Time {
	var ms int64
	for _, b := range id[:6] {
		ms = ms<<8 | int64(b)
	}
	return DayStart(time.UnixMilli(ms))
}

// Querier is what both a pool and a transaction offer.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// LastSeq is the highest seq the inbox sequence has handed out, or would
// have by now: after a roll the sequence's next value is the day's base, so
// everything below it is past. (pg_sequences shows no last value then.)
func LastSeq(ctx context.Context, q Querier) (int64, error) {
	var last int64
	err := q.QueryRow(ctx, lastSeqSQL).Scan(&last)
	return last, err
}

//go:embed sql/last_seq.sql
var lastSeqSQL string
