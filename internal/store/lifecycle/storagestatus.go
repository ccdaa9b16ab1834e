package lifecycle

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// TableStorage is one managed table in a storage status.
type TableStorage struct {
	Table      string
	Bytes      int64 // every partition, indexes and TOAST included
	Partitions int
	// Oldest is the time of the oldest retained row (nil when the table is
	// empty): an event's received_at, a pull entry's event's received_at, a
	// job's creation, an attempt's start, a quarantined record's received_at, an
	// id's own time. For tables partitioned by day it is exact for the
	// inbox and quarantine and the start of the oldest non-empty day for
	// the others: finding the exact row would read a whole day.
	Oldest *time.Time
	// What the next prune removes.
	PruneRows, PruneBytes int64
	PrunePartitions       int
}

// StorageStatus is every managed table's size, age and what the next prune
// removes, as of a moment.
type StorageStatus struct {
	Tables []TableStorage
	// Kept lists expired partitions that stay, and why.
	Kept []Kept
	// ExpiredCursors counts pull cursors the next prune leaves behind
	// retention.
	ExpiredCursors int64
}

// StorageStatus reports each managed table as of now under policy.
func (s *Store) StorageStatus(ctx context.Context, now time.Time, policy RetentionPolicy) (StorageStatus, error) {
	plan, err := s.Prune(ctx, now, policy, true)
	if err != nil {
		return StorageStatus{}, err
	}
	st := StorageStatus{Kept: plan.Kept, ExpiredCursors: plan.ExpiredCursors}
	for _, t := range managedTables {
		ts, err := s.tableStorage(ctx, t)
		if err != nil {
			return StorageStatus{}, pg.Classify(err)
		}
		for _, r := range plan.Removals {
			if r.Table != t.Name {
				continue
			}
			ts.PruneRows += r.Rows
			ts.PruneBytes += r.Bytes
			if r.Whole {
				ts.PrunePartitions++
			}
		}
		st.Tables = append(st.Tables, ts)
	}
	return st, nil
}

func (s *Store) tableStorage(ctx context.Context, t managedTable) (TableStorage, error) {
	ts := TableStorage{Table: t.Name}
	root := t.Name
	err := s.Pool.QueryRow(ctx, tableSizeSQL, pgx.StrictNamedArgs{"table": root}).Scan(&ts.Bytes, &ts.Partitions)
	if err != nil {
		return ts, fmt.Errorf("size of %s: %w", root, err)
	}
	ts.Oldest, err = s.oldestRow(ctx, t)
	return ts, err
}

func (s *Store) oldestRow(ctx context.Context, t managedTable) (*time.Time, error) {
	var oldest *time.Time
	var err error
	switch t.Name {
	case TableEvents:
		err = s.Pool.QueryRow(ctx, oldestEventSQL).Scan(&oldest)
		return oldest, err
	case TableQuarantine:
		err = s.Pool.QueryRow(ctx, oldestQuarantinedSQL).Scan(&oldest)
		return oldest, err
	}
	parts, err := listPartitions(ctx, s.Pool, t)
	if err != nil {
		return nil, err
	}
	if t.kind == bySeq {
		sortBySeq(parts)
	}
	// The catch-all (listed first) may hold rows of any age; it is small,
	// so its exact minimum is affordable. Daily partitions are read only
	// for whether they hold anything.
	var found *time.Time
	for _, p := range parts {
		var sql string
		var args pgx.StrictNamedArgs
		switch {
		case t.Name == TablePullEntries:
			sql = oldestPullEntryBetweenSQL
			args = pgx.StrictNamedArgs{"lo": p.lo, "hi": p.hi, "from": max(p.lo, 0)}
		case p.catchAll():
			sql = oldestInCatchAllSQL[t.Name]
		default:
			sql = dayIfPartitionHasRowsSQL
			args = pgx.StrictNamedArgs{"partition": p.name, "day": p.day}
		}
		var oldest *time.Time
		if err := s.Pool.QueryRow(ctx, sql, args).Scan(&oldest); err != nil {
			return nil, fmt.Errorf("oldest row of %s: %w", p.name, err)
		}
		if oldest != nil && (found == nil || oldest.Before(*found)) {
			found = oldest
		}
		if found != nil && !p.catchAll() {
			break
		}
	}
	return found, nil
}

// oldestInCatchAllSQL reads, by table, the time of the oldest row of its
// catch-all partition: the time of an id's own, or an attempt's start.
var oldestInCatchAllSQL = map[string]string{
	TableEventIDs:         oldestEventIDDefaultSQL,
	TableDeliveryJobs:     oldestJobDefaultSQL,
	TableDeliveryAttempts: oldestAttemptDefaultSQL,
}

//go:embed sql/table_size.sql
var tableSizeSQL string

//go:embed sql/oldest_event.sql
var oldestEventSQL string

//go:embed sql/oldest_quarantined.sql
var oldestQuarantinedSQL string

//go:embed sql/oldest_pull_entry_between.sql
var oldestPullEntryBetweenSQL string

//go:embed sql/oldest_event_id_default.sql
var oldestEventIDDefaultSQL string

//go:embed sql/oldest_job_default.sql
var oldestJobDefaultSQL string

//go:embed sql/oldest_attempt_default.sql
var oldestAttemptDefaultSQL string

//go:embed sql/day_if_partition_has_rows.sql
var dayIfPartitionHasRowsSQL string
