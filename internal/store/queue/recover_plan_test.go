package queue

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

func TestRecoverReadsOnlyTheDaysOfItsRange(t *testing.T) {
	t.Parallel()
	st := ingestStore(t)
	// Days ahead, so yesterday has a partition of its own whatever the
	// server's time zone: migration 3 gave the legacy partition the seqs
	// below its current_date, which may be today's UTC date.
	now := time.Now().Add(2 * day)
	seedDays(t, st, now)
	yesterday := now.Add(-day).UTC().Format("20060102")
	plan := explain(t, st, true, recoverEvents, pgx.NamedArgs{
		"from": pg.DaySeqBase(now), "hi": pg.DaySeqBase(now) + 2<<pg.SeqDayBits, "tenant": "acme",
		"since": pg.DayStart(now), "until": now.Add(day), "major": 1, "origin": "", "payload": false, "batch": DefaultRecoverBatch,
		"operational_source": OperationalSource, "subscription": "0190b6a2-7c1e-7d3a-9f00-000000000001",
	})
	// Pruned at executor start-up, yesterday's partition is not in the
	// plan at all; pruned later, it shows as never executed.
	for _, line := range strings.Split(plan, "\n") {
		if strings.Contains(line, " on events_p"+yesterday+" ") && !strings.Contains(line, "(never executed)") {
			t.Errorf("recover of today reads yesterday's partition:\n%s", plan)
		}
	}
	if !strings.Contains(plan, " on events_p"+now.UTC().Format("20060102")+" ") {
		t.Errorf("recover of today does not read today's partition:\n%s", plan)
	}
}
