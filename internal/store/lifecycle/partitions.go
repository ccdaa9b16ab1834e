package lifecycle

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

const day = 24 * time.Hour

type partitionKind int

const (
	bySeq partitionKind = iota
	byID
	byTime
)

// managedTable is one table retention cuts.
type managedTable struct {
	// Name is the table as operators, metrics and the CLI name it.
	Name string
	// parent is where daily partitions attach.
	parent string
	kind   partitionKind
	key    string
	// catchAll is the partition for what no daily one covers: the default
	// partition, or events' and pull entries' range below the first day.
	catchAll string
	// fillFactor is the new partitions' fill factor, 0 for the server's
	// default (migration 22 says why jobs have one).
	fillFactor int
}

func (t managedTable) hasDefault() bool { return t.kind != bySeq }

// Table names as they appear in storage status, prune reports and the
// table label of the storage metrics.
const (
	TableEvents           = "events"
	TableEventIDs         = "event_ids"
	TablePullEntries      = "pull_entries"
	TableDeliveryJobs     = "delivery_jobs"
	TableDeliveryAttempts = "delivery_attempts"
	TableQuarantine       = "quarantine"
)

var (
	eventsTable     = managedTable{Name: TableEvents, parent: "events", kind: bySeq, key: "seq", catchAll: "events_legacy"}
	pullTable       = managedTable{Name: TablePullEntries, parent: "pull_entries", kind: bySeq, key: "event_seq", catchAll: "pull_entries_legacy"}
	eventIDsTable   = managedTable{Name: TableEventIDs, parent: "event_ids", kind: byID, key: "id", catchAll: "event_ids_default"}
	jobsTable       = managedTable{Name: TableDeliveryJobs, parent: "delivery_jobs", kind: byID, key: "id", catchAll: "delivery_jobs_default", fillFactor: jobsFillFactor}
	attemptsTable   = managedTable{Name: TableDeliveryAttempts, parent: "delivery_attempts", kind: byTime, key: "started_at", catchAll: "delivery_attempts_default"}
	quarantineTable = managedTable{Name: TableQuarantine, parent: "quarantine", kind: byTime, key: "received_at", catchAll: "quarantine_default"}
)

// jobsFillFactor leaves half of each page of delivery jobs for the
// versions their updates write: migration 22 gives the reason, and sets the
// same figure on the partitions that existed before it.
const jobsFillFactor = 50

// managedTables in the order status lists them.
var managedTables = []managedTable{eventsTable, eventIDsTable, pullTable, jobsTable, attemptsTable, quarantineTable}

// partition is one partition of a managed table as the catalog shows it.
type partition struct {
	name  string
	day   time.Time // zero for the catch-all
	lo    int64     // seq bounds (bySeq only); lo is minInt64 for MINVALUE
	hi    int64
	bytes int64
}

func (p partition) catchAll() bool { return p.day.IsZero() }

func partitionName(t managedTable, d time.Time) string {
	return t.parent + "_p" + d.Format("20060102")
}

var partitionDay = regexp.MustCompile(`_p(\d{8})$`)
var seqBound = regexp.MustCompile(`FROM \((MINVALUE|'?(-?\d+)'?)\) TO \('?(-?\d+)'?\)`)

// listPartitions returns t's partitions, the catch-all first, then by day.
func listPartitions(ctx context.Context, q pg.Querier, t managedTable) ([]partition, error) {
	rows, err := q.Query(ctx, listPartitionsSQL, pgx.StrictNamedArgs{"parent": t.parent})
	if err != nil {
		return nil, fmt.Errorf("list partitions of %s: %w", t.parent, err)
	}
	var parts []partition
	var name, bound string
	var size int64
	_, err = pgx.ForEachRow(rows, []any{&name, &bound, &size}, func() error {
		p := partition{name: name, bytes: size}
		if m := partitionDay.FindStringSubmatch(name); m != nil {
			d, err := time.Parse("20060102", m[1])
			if err != nil {
				return fmt.Errorf("partition %s: %w", name, err)
			}
			p.day = d
		} else if name != t.catchAll {
			return nil // not ours: leave it alone
		}
		if t.kind == bySeq {
			m := seqBound.FindStringSubmatch(bound)
			if m == nil {
				return fmt.Errorf("partition %s: unexpected bounds %q", name, bound)
			}
			p.lo = minInt64
			if m[1] != "MINVALUE" {
				p.lo, _ = strconv.ParseInt(m[2], 10, 64)
			}
			p.hi, _ = strconv.ParseInt(m[3], 10, 64)
		}
		parts = append(parts, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list partitions of %s: %w", t.parent, err)
	}
	slices.SortFunc(parts, func(a, b partition) int { return a.day.Compare(b.day) })
	return parts, nil
}

const minInt64 = -1 << 63

// sortBySeq orders seq-ranged partitions by their ranges (the legacy one,
// below every day, first).
func sortBySeq(parts []partition) {
	slices.SortFunc(parts, func(a, b partition) int { return cmp.Compare(a.lo, b.lo) })
}

// bounds are day d's partition bounds of t as the key's text, which
// hubctl_create_partition quotes into its DDL.
func bounds(t managedTable, d time.Time) (lo, hi string) {
	next := d.Add(day)
	switch t.kind {
	case bySeq:
		return strconv.FormatInt(pg.DaySeqBase(d), 10), strconv.FormatInt(pg.DaySeqBase(next), 10)
	case byID:
		return pg.UUIDAt(d), pg.UUIDAt(next)
	default:
		return d.Format(time.RFC3339), next.Format(time.RFC3339)
	}
}

// lockTimeout bounds how long partition DDL waits for the brief exclusive
// lock it needs on a parent table. A statement that holds the table longer
// (an operator's long query) makes this run give up, not stall the hub
// behind it; the next run tries again.
const lockTimeout = "5s"

// createPartition adds day d's partition to t, through
// hubctl_create_partition (migrations 17 and 22): created on its own and then
// attached, so that for the inbox and pull entries, which have no default
// partition, ingest and dispatch never wait for it. Tables with a default
// partition are locked exclusively instead, briefly, while the rows the
// default holds for that day move into the new one: a read planned before
// the attach would miss the moved rows, and an update of one (dispatch
// recording a job that ingest had put in the default partition) would find
// it deleted and update nothing. Partitions are made days ahead, so that is
// once a day per table, with nothing to move but on a fresh database or
// after missed runs.
func (s *Store) createPartition(ctx context.Context, t managedTable, d time.Time) error {
	name := partitionName(t, d)
	lo, hi := bounds(t, d)
	var catchAll any // NULL: no default partition, no rows to move
	if t.hasDefault() {
		catchAll = t.catchAll
	}
	var fillFactor any // NULL: the server's default
	if t.fillFactor > 0 {
		fillFactor = t.fillFactor
	}
	return pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, setLockTimeoutSQL, pgx.StrictNamedArgs{"lock_timeout": lockTimeout}); err != nil {
			return fmt.Errorf("create partition %s: %w", name, err)
		}
		_, err := tx.Exec(ctx, createPartitionSQL, pgx.StrictNamedArgs{
			"parent": t.parent, "partition": name, "catch_all": catchAll, "key": t.key, "lo": lo, "hi": hi,
			"fillfactor": fillFactor,
		})
		if err != nil {
			return fmt.Errorf("create partition %s: %w", name, err)
		}
		return nil
	})
}

// PartitionsAhead is how many days past today have their partitions
// ready, so a maintainer that misses a run or two changes nothing.
const PartitionsAhead = 2

// EnsurePartitions creates the missing partitions (CreatePartitions), then
// moves the inbox's sequence into today's range (MoveInboxSequence), which
// needs today's partition: what a prune run and a fresh database need.
func (s *Store) EnsurePartitions(ctx context.Context, now time.Time) error {
	if err := s.CreatePartitions(ctx, now); err != nil {
		return err
	}
	return s.MoveInboxSequence(ctx, now)
}

// CreatePartitions creates the daily partitions of today and the days
// ahead that are missing. Two runs at once would both create a missing
// partition, and one fail: callers hold the retention lock.
func (s *Store) CreatePartitions(ctx context.Context, now time.Time) error {
	today := pg.DayStart(now)
	for _, t := range managedTables {
		parts, err := listPartitions(ctx, s.Pool, t)
		if err != nil {
			return pg.Classify(err)
		}
		have := make(map[time.Time]bool, len(parts))
		for _, p := range parts {
			have[p.day] = true
		}
		// A seq range that another partition already covers in part (the
		// legacy one, when the clock is set before the migration) gets
		// none of its own.
		overlaps := func(d time.Time) bool {
			lo, hi := pg.DaySeqBase(d), pg.DaySeqBase(d.Add(day))
			return slices.ContainsFunc(parts, func(p partition) bool { return lo < p.hi && p.lo < hi })
		}
		for k := range PartitionsAhead + 1 {
			d := today.Add(time.Duration(k) * day)
			if have[d] || (t.kind == bySeq && overlaps(d)) {
				continue
			}
			if err := s.createPartition(ctx, t, d); err != nil {
				return pg.Classify(err)
			}
		}
	}
	return nil
}

// MoveInboxSequence moves the inbox's sequence up to the base of now's day
// when it is below it, holding the ingest lock exclusively, so the batches
// that drew seqs of the old range have committed when the new one starts
// and the move happens between batches, never inside one. Only days whose
// events partition exists are moved into.
func (s *Store) MoveInboxSequence(ctx context.Context, now time.Time) error {
	today := pg.DayStart(now)
	base := pg.DaySeqBase(today)
	err := pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		var exists bool
		err := tx.QueryRow(ctx, partitionExistsSQL, pgx.StrictNamedArgs{"partition": partitionName(eventsTable, today)}).Scan(&exists)
		if err != nil || !exists {
			return err
		}
		if _, err := tx.Exec(ctx, takeIngestLockSQL, pgx.StrictNamedArgs{"ingest_lock_key": pg.IngestLockKey}); err != nil {
			return err
		}
		last, err := pg.LastSeq(ctx, tx)
		if err != nil || last >= base-1 {
			return err
		}
		_, err = tx.Exec(ctx, moveInboxSequenceSQL, pgx.StrictNamedArgs{"base": base})
		return err
	})
	if err != nil {
		return pg.Classify(fmt.Errorf("move the inbox sequence to %s: %w", today.Format(time.DateOnly), err))
	}
	return nil
}

//go:embed sql/list_partitions.sql
var listPartitionsSQL string

//go:embed sql/set_lock_timeout.sql
var setLockTimeoutSQL string

//go:embed sql/create_partition.sql
var createPartitionSQL string

//go:embed sql/partition_exists.sql
var partitionExistsSQL string

//go:embed sql/move_inbox_sequence.sql
var moveInboxSequenceSQL string
