package history_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/history"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Each of the Days days before now gets its share of events, ids and jobs
// (with their attempts) in its own daily partitions, and the inbox's legacy range ends
// where the history starts.
func TestSeedSpreadsTheHistoryOverItsDays(t *testing.T) {
	ctx := context.Background()
	st, err := storetest.Connect(ctx, pgtest.DSN(t), pg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	const perDay = 10
	now := time.Now()
	if err := history.Seed(ctx, st.Lifecycle, "t-history", perDay*history.Days, now); err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= history.Days; k++ {
		suffix := "_p" + pg.DayStart(now.Add(-time.Duration(k)*24*time.Hour)).Format("20060102")
		for _, table := range []string{"events", "event_ids", "delivery_jobs"} {
			var n int
			if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM `+table+suffix).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != perDay {
				t.Errorf("%s%s holds %d rows, want %d", table, suffix, n, perDay)
			}
		}
	}
	// Each job's successful attempt is folded into it (migration 24).
	var attempts int
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM delivery_jobs WHERE succeeded_attempt_id IS NOT NULL`).Scan(&attempts); err != nil {
		t.Fatal(err)
	}
	if attempts != perDay*history.Days {
		t.Errorf("%d attempts, want %d", attempts, perDay*history.Days)
	}
	first := pg.DaySeqBase(now.Add(-history.Days * 24 * time.Hour))
	for _, legacy := range []string{"events_legacy", "pull_entries_legacy"} {
		var bound string
		if err := st.Pool.QueryRow(ctx, `SELECT pg_get_expr(relpartbound, oid) FROM pg_class WHERE relname = $1`, legacy).Scan(&bound); err != nil {
			t.Fatal(err)
		}
		if want := "FOR VALUES FROM (MINVALUE) TO ('" + strconv.FormatInt(first, 10) + "')"; bound != want {
			t.Errorf("%s is %q, want %q", legacy, bound, want)
		}
	}
}
