//go:build linux

package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/benchmark"
)

const (
	// backlogJobs is the backlog the memory bound is promised for
	// (docs/reliability.md, Bounded memory under a backlog).
	backlogJobs = 1_000_000
	// maxRSSMiB is that bound: the hub's resident memory at full delivery
	// load with the backlog queued.
	maxRSSMiB = 150
	// backlogWatch is how long the hub delivers from the backlog while its
	// memory is watched.
	backlogWatch = 30 * time.Second
)

// TestChaosBacklogMemory queues a million due jobs behind a running hub's
// back, restarts it and watches its resident memory while it delivers from
// them at full speed (the receiver answers at once) with live traffic
// still arriving. The hub holds only what it is working on (a queue bounded
// by workers and claim batches, a bounded success queue, caches of the
// subscriptions and sinks it uses), so the backlog's size must not show in
// its memory. It runs in make chaos only: the seeding alone takes a minute.
func TestChaosBacklogMemory(t *testing.T) {
	prelude(t)
	if !long(t) {
		t.Skip("seeds a million jobs: runs in make chaos (" + roundsEnv + " set)")
	}
	w := newWorld(t, worldOptions{})
	w.receiver.fast.Store(true)
	w.kill()
	seeded := time.Now()
	w.seedBacklog(backlogJobs)
	t.Logf("seeded %d due jobs in %v", backlogJobs, time.Since(seeded).Round(time.Second))

	w.restart()
	if _, err := w.waitReady(time.Now()); err != nil {
		t.Fatal(err)
	}
	pid := w.hub.Process.Pid
	before := w.count(`SELECT count(*) FROM delivery_jobs WHERE state = 'succeeded'`)
	var peakRSS uint64
	deadline := time.Now().Add(backlogWatch)
	for time.Now().Before(deadline) {
		if rss, ok := benchmark.ReadProcStatusKiB(pid, "VmRSS"); ok {
			peakRSS = max(peakRSS, rss)
		}
		time.Sleep(100 * time.Millisecond)
	}
	hwm, ok := benchmark.ReadProcStatusKiB(pid, "VmHWM")
	if !ok {
		t.Fatalf("cannot read the hub's VmHWM from /proc/%d/status", pid)
	}
	delivered := w.count(`SELECT count(*) FROM delivery_jobs WHERE state = 'succeeded'`) - before
	left := w.count(`SELECT count(*) FROM delivery_jobs WHERE state = 'pending'`)
	t.Logf("over %v: %d delivered (%.0f/s), %d still pending; resident memory: peak sampled %d MiB, high-water mark %d MiB",
		backlogWatch, delivered, float64(delivered)/backlogWatch.Seconds(), left, peakRSS/1024, hwm/1024)
	if hwm/1024 > maxRSSMiB {
		t.Errorf("the hub's resident memory reached %d MiB with a %d-job backlog; the bound is %d MiB", hwm/1024, backlogJobs, maxRSSMiB)
	}
	if delivered < 10_000 || left < backlogJobs/2 {
		t.Errorf("%d delivered, %d left: the hub was not delivering from the backlog the whole time it was watched", delivered, left)
	}
}

// seedBacklog writes n events of the chaos tenant and a due job for each to
// the world's webhook subscription, straight into the database (the hub
// would take minutes to ingest them), in batches that commit on their own.
func (w *world) seedBacklog(n int) {
	w.t.Helper()
	const batch = 100_000
	ctx := context.Background()
	for done := 0; done < n; done += batch {
		size := min(batch, n-done)
		_, err := w.pool.Exec(ctx, `
WITH ev AS (
    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
    SELECT $1, gen_random_uuid(), 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.transaction.posted',
           now(), '{}', '{}', convert_to('{"amount":' || g || '}', 'UTF8'), 'seeded', 0, $3 + g
    FROM generate_series(1, $2) g
    RETURNING seq)
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq)
SELECT (lpad(to_hex(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
        || substr(replace(gen_random_uuid()::text, '-', ''), 13))::uuid, $1, $4::uuid, seq
FROM ev ORDER BY seq`, tenant, size, done, w.sub)
		if err != nil {
			w.t.Fatalf("seed the backlog: %v", err)
		}
	}
	if _, err := w.pool.Exec(ctx, `ANALYZE events, delivery_jobs`); err != nil {
		w.t.Fatal(err)
	}
}
