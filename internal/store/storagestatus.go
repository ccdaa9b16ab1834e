package store

import (
	"context"
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
	err := s.Pool.QueryRow(ctx, `
SELECT coalesce(sum(pg_total_relation_size(relid)), 0), count(*) FILTER (WHERE isleaf)
FROM pg_partition_tree($1::regclass)`, root).Scan(&ts.Bytes, &ts.Partitions)
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
		err = s.Pool.QueryRow(ctx, `SELECT (SELECT received_at FROM events ORDER BY seq LIMIT 1)`).Scan(&oldest)
		return oldest, err
	case TableQuarantine:
		err = s.Pool.QueryRow(ctx, `SELECT min(received_at) FROM quarantine`).Scan(&oldest)
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
		ident := pgx.Identifier{p.name}.Sanitize()
		var sql string
		var args []any
		switch {
		case t.kind == bySeq:
			sql = fmt.Sprintf(`SELECT CASE WHEN EXISTS (SELECT 1 FROM %s)
				THEN (SELECT received_at FROM events WHERE seq >= %d ORDER BY seq LIMIT 1) END`, ident, max(p.lo, 0))
		case p.catchAll() && t.kind == byID:
			sql = fmt.Sprintf(`SELECT (SELECT to_timestamp(('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint / 1000.0)
				FROM %s ORDER BY id LIMIT 1)`, ident)
		case p.catchAll():
			sql = fmt.Sprintf(`SELECT min(%s) FROM %s`, t.key, ident)
		default:
			sql = fmt.Sprintf(`SELECT CASE WHEN EXISTS (SELECT 1 FROM %s) THEN $1::timestamptz END`, ident)
			args = append(args, p.day)
		}
		var oldest *time.Time
		if err := s.Pool.QueryRow(ctx, sql, args...).Scan(&oldest); err != nil {
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
