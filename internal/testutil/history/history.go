// Package history fills a hub's database with the stored past of a busy
// hub, for benchmarks that compare hot paths on an empty database with the
// same paths beside millions of rows: each event with its id and a
// succeeded delivery job with one attempt, spread over the daily
// partitions of the days before now, as retention leaves them.
package history

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// Days is how many days before now the history spans.
const Days = 7

// Seed stores n past events of tenant (created when missing), delivered
// to a subscription of its own that is deleted, so it matches nothing new
// and claims never see it: an equal share on each of the Days days before
// now, in one INSERT ... SELECT per day and table, then analyses the
// tables.
//
// The database must be freshly migrated: the catch-all range below the
// first day, empty then, is narrowed to end where the history starts, so
// that the history's days get partitions of their own (a migrated hub's
// past starts on its migration day).
func Seed(ctx context.Context, st *lifecycle.Store, tenant string, n int, now time.Time) error {
	var subscription string
	err := st.Pool.QueryRow(ctx, createHistorySubscriptionSQL, pgx.StrictNamedArgs{"tenant": tenant}).Scan(&subscription)
	if err != nil {
		return fmt.Errorf("create the history's subscription: %w", err)
	}
	first := pg.DaySeqBase(now.Add(-Days * 24 * time.Hour))
	for _, t := range []string{"events", "pull_entries"} {
		legacy := t + "_legacy"
		if _, err := st.Pool.Exec(ctx, "DROP TABLE "+pgx.Identifier{legacy}.Sanitize()); err != nil {
			return fmt.Errorf("narrow %s: %w", legacy, err)
		}
		_, err := st.Pool.Exec(ctx, narrowLegacyPartitionSQL, pgx.StrictNamedArgs{"parent": t, "partition": legacy, "hi": strconv.FormatInt(first, 10)})
		if err != nil {
			return fmt.Errorf("narrow %s: %w", legacy, err)
		}
	}
	for k := Days; k >= 0; k-- {
		if err := st.EnsurePartitions(ctx, now.Add(-time.Duration(k)*24*time.Hour)); err != nil {
			return err
		}
	}
	perDay := n / Days
	for k := Days; k >= 1; k-- {
		dayStart := pg.DayStart(now.Add(-time.Duration(k) * 24 * time.Hour))
		base := pg.DaySeqBase(dayStart)
		_, err := st.Pool.Exec(ctx, seedDaySQL, pgx.StrictNamedArgs{
			"base": base, "tenant": tenant, "per_day": perDay, "day_start": dayStart, "subscription": subscription,
		})
		if err != nil {
			return fmt.Errorf("seed the history of %s: %w", dayStart.Format(time.DateOnly), err)
		}
		_, err = st.Pool.Exec(ctx, recordSeededDaySQL, pgx.StrictNamedArgs{"day": dayStart, "last_seq": base + int64(perDay) - 1})
		if err != nil {
			return fmt.Errorf("seed the history of %s: %w", dayStart.Format(time.DateOnly), err)
		}
	}
	// What autovacuum would do over days, done now so that it does not
	// run during the measure.
	if _, err := st.Pool.Exec(ctx, analyzeHistorySQL); err != nil {
		return err
	}
	// The gigabytes just written would otherwise be flushed by the
	// checkpointer during the measure, a cost of seeding, not of the
	// history: a hub's past was checkpointed long ago.
	_, err = st.Pool.Exec(ctx, checkpointSQL)
	return err
}

//go:embed sql/create_history_subscription.sql
var createHistorySubscriptionSQL string

//go:embed sql/narrow_legacy_partition.sql
var narrowLegacyPartitionSQL string

//go:embed sql/seed_day.sql
var seedDaySQL string

//go:embed sql/record_seeded_day.sql
var recordSeededDaySQL string

//go:embed sql/analyze_history.sql
var analyzeHistorySQL string

//go:embed sql/checkpoint.sql
var checkpointSQL string
