package lifecycle

import (
	"context"
	"testing"
	"time"
)

func nowUTC() time.Time { return time.Now().UTC() }

// Every partition of delivery_jobs, the catch-all and those a migration or
// a maintainer creates, leaves room on its pages for the versions job
// updates write (migration 22); the other tables keep the server's default.
func TestJobPartitionsLeaveRoomForTheirUpdates(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	if err := st.EnsurePartitions(ctx, nowUTC()); err != nil {
		t.Fatal(err)
	}
	rows, err := st.Pool.Query(ctx, `
SELECT p.relname::text, i.inhparent::regclass::text, coalesce(array_to_string(p.reloptions, ','), '')
FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhrelid
WHERE i.inhparent IN ('delivery_jobs'::regclass, 'delivery_attempts'::regclass, 'events'::regclass)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	jobs := 0
	for rows.Next() {
		var name, parent, options string
		if err := rows.Scan(&name, &parent, &options); err != nil {
			t.Fatal(err)
		}
		want := ""
		if parent == "delivery_jobs" {
			want = "fillfactor=50"
			jobs++
		}
		if options != want {
			t.Errorf("partition %s of %s has storage options %q, want %q", name, parent, options, want)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if jobs < 1+1+PartitionsAhead { // the default, today, the days ahead
		t.Errorf("found %d partitions of delivery_jobs, want at least %d", jobs, 2+PartitionsAhead)
	}
}
