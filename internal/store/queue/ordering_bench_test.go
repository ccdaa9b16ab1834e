package queue

import (
	"context"
	"testing"
	"time"
)

// BenchmarkClaimBehindABlockedKey claims from two tenants while one of
// them has 10,000 due jobs queued behind an ordering key whose head waits
// for its retry (docs/architecture.md, Delivery controls meet in the
// claim), and, for comparison, from the other tenant alone. The claims
// that park the queued jobs are logged, not timed; each timed claim's jobs
// are handed back untimed, so every iteration claims from the same
// backlog.
func BenchmarkClaimBehindABlockedKey(b *testing.B) {
	for _, tc := range []struct {
		name   string
		behind int
	}{{"10000 behind a retrying key", 10000}, {"no ordered backlog", 0}} {
		b.Run(tc.name, func(b *testing.B) { benchmarkClaimBehind(b, tc.behind) })
	}
}

func benchmarkClaimBehind(b *testing.B, behind int) {
	st := ingestStore(b)
	ctx := context.Background()
	ordered := addTestSubscription(b, st, "acme", "webhook", []string{"*"})
	other := addTestSubscription(b, st, "zeta", "webhook", []string{"*"})
	if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET ordering = 'subject' WHERE id = $1`, ordered); err != nil {
		b.Fatal(err)
	}
	if behind > 0 {
		_, err := st.Pool.Exec(ctx, `
WITH ev AS (
    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
    SELECT 'acme', gen_random_uuid(), 'transaction.posted', '1.2.0', 1, 'midaz', 'studio.lerian.transaction.posted',
           now(), '{}', '{}', '{}', 'topic', 0, g
    FROM generate_series(0, $2) g
    RETURNING seq)
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, ordering_key, attempts, next_attempt_at)
SELECT gen_random_uuid(), 'acme', $1, seq, 'k',
       CASE WHEN seq = (SELECT min(seq) FROM ev) THEN 1 ELSE 0 END,
       CASE WHEN seq = (SELECT min(seq) FROM ev) THEN now() + interval '1 hour' ELSE now() - interval '1 second' END
FROM ev`, ordered, behind)
		if err != nil {
			b.Fatal(err)
		}
	}
	insertJobs(b, st, "zeta", other, 1000, time.Now().Add(-time.Second))
	if _, err := st.Pool.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	claimOnce := func() ClaimResult {
		res, err := st.Claim(ctx, ClaimRequest{Owner: "w", Limit: 64, Now: time.Now(), LeaseMargin: testLeaseMargin})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if _, err := st.Release(ctx, "w", jobIDs(res.Jobs)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		return res
	}
	// The first claims park the jobs behind the key, a share of the batch
	// at a time; from then on no claim walks them.
	warm, claims, parked := time.Now(), 0, 0
	for {
		res := claimOnce()
		claims++
		parked += res.Parked
		if res.Parked == 0 {
			break
		}
	}
	b.Logf("%d claims parked %d jobs in %v", claims, parked, time.Since(warm))
	b.ResetTimer()
	for b.Loop() {
		if res := claimOnce(); len(res.Jobs) == 0 {
			b.Fatal("the claim took nothing of the other tenant")
		}
	}
}
