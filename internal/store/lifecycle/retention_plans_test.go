package lifecycle

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// Retention's probes of one day's partition query the parent within the
// partition's bounds: even as a generic plan, they read that partition and
// no other.
func TestRetentionProbesReadOnlyTheirPartition(t *testing.T) {
	t.Parallel()
	st := ingestStore(t)
	now := time.Now()
	seedDays(t, st, now)
	today := pg.DayStart(now)
	idsLo, idsHi := bounds(eventIDsTable, today)
	seqs := pgx.StrictNamedArgs{"lo": pg.DaySeqBase(today), "hi": pg.DaySeqBase(today.Add(day))}
	for _, probe := range []struct {
		what, sql string
		args      pgx.StrictNamedArgs
		table     string
	}{
		{"the newest event", newestEventBetweenSQL, seqs, "events"},
		{"expired pull cursors", countExpiringPullCursorsSQL, seqs, "pull_entries"},
		{"ids of retained events", eventIDsGoneSQL, pgx.StrictNamedArgs{"min_retained": int64(0), "day": today, "lo": idsLo, "hi": idsHi}, "event_ids"},
	} {
		plan := explainGeneric(t, st, probe.sql, probe.args)
		if !strings.Contains(plan, probe.table+"_p"+today.Format("20060102")) {
			t.Errorf("%s: the plan does not read today's partition of %s:\n%s", probe.what, probe.table, plan)
		}
		for _, other := range []time.Time{today.Add(-day), today.Add(day)} {
			for _, line := range strings.Split(plan, "\n") {
				if strings.Contains(line, probe.table+"_p"+other.Format("20060102")) && !strings.Contains(line, "(never executed)") {
					t.Errorf("%s reads %s's partition of %s:\n%s", probe.what, other.Format(time.DateOnly), probe.table, plan)
				}
			}
		}
	}
}
