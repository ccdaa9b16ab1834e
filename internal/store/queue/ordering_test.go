package queue

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/oncall"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// insertKeyedJobs inserts one due job per key, in seq order, each with its
// ordering key ("" for none, NULL).
func insertKeyedJobs(t *testing.T, st *testStore, tenant, sub string, keys []string) []uuid.UUID {
	t.Helper()
	ids := make([]uuid.UUID, len(keys))
	for i, key := range keys {
		var k *string
		if key != "" {
			k = &key
		}
		err := st.Pool.QueryRow(context.Background(), `
WITH ev AS (
    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
    VALUES ($1, gen_random_uuid(), 'transaction.posted', '1.2.0', 1, 'midaz', 'studio.lerian.transaction.posted',
            now(), '{}', '{}', '{}', 'topic', 0, 0)
    RETURNING seq)
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, ordering_key, next_attempt_at)
SELECT gen_random_uuid(), $1, $2, seq, $3, now() - interval '1 second' FROM ev
RETURNING id`, tenant, sub, k).Scan(&ids[i])
		if err != nil {
			t.Fatalf("insert keyed job: %v", err)
		}
	}
	return ids
}

func complete(t *testing.T, st *testStore, job ClaimedJob, owner string, ok bool, retry Retry) {
	t.Helper()
	a := attemptOf(job, owner, ok, 200)
	if !ok {
		a.StatusCode, a.Retry = 503, retry
	}
	if _, err := st.Complete(context.Background(), a, noAutoDisable); err != nil {
		t.Fatalf("complete: %v", err)
	}
}

func TestClaimTakesTheHeadOfEachOrderingKeyOnly(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	ids := insertKeyedJobs(t, st, "acme", sub, []string{"a", "a", "b", "", "a", "b", "b", ""})
	a1, a2, b1, free1, a3, b2, b3, free2 := ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], ids[6], ids[7]
	byID := func(res ClaimResult) map[uuid.UUID]ClaimedJob {
		m := map[uuid.UUID]ClaimedJob{}
		for _, j := range res.Jobs {
			m[j.ID] = j
		}
		return m
	}
	want := func(res ClaimResult, ids ...uuid.UUID) map[uuid.UUID]ClaimedJob {
		t.Helper()
		got := jobIDs(res.Jobs)
		slices.SortFunc(got, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
		if !slices.Equal(got, ids) {
			t.Fatalf("claimed %v, want %v", got, ids)
		}
		return byID(res)
	}

	// One claim takes each key's oldest job and every unkeyed one.
	first := want(claim(t, st, "w", 20, ""), a1, b1, free1, free2)
	if k := first[a1].OrderingKey; k == nil || *k != "a" || first[free1].OrderingKey != nil {
		t.Errorf("ordering keys of the claimed jobs: a1 %v, unkeyed %v", k, first[free1].OrderingKey)
	}
	want(claim(t, st, "w", 20, ""))

	// a1 succeeds: a2 is next. b1 fails and retries later: it holds b.
	complete(t, st, first[a1], "w", true, Retry{})
	complete(t, st, first[b1], "w", false, Retry{At: time.Now().Add(-time.Millisecond)})
	second := want(claim(t, st, "w", 20, ""), a2, b1)

	// b1 fails again, due in an hour: b waits behind it (head-of-line
	// blocking), a goes on.
	complete(t, st, second[b1], "w", false, Retry{At: time.Now().Add(time.Hour)})
	complete(t, st, second[a2], "w", true, Retry{})
	want(claim(t, st, "w", 20, ""), a3)
	if n, err := oncall.New(st.Pool).OrderingBlockedKeys(ctx); err != nil || n != 1 {
		t.Errorf("blocked keys = %d, %v; want 1 (b)", n, err)
	}

	// A lease that expires keeps its key: a3 comes back before anything
	// after it. Dead-lettering b1 lets b2 go.
	if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, a3); err != nil {
		t.Fatal(err)
	}
	if rec, err := st.RecoverExpiredLeases(ctx, time.Now(), 5); err != nil || rec.Retried != 1 {
		t.Fatalf("recover = %+v, %v", rec, err)
	}
	if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET next_attempt_at = now() - interval '1 second' WHERE id = $1`, b1); err != nil {
		t.Fatal(err)
	}
	fourth := want(claim(t, st, "w", 20, ""), a3, b1)
	complete(t, st, fourth[b1], "w", false, Retry{Exhausted: true})
	if row := readJob(t, st, b1); row.State != pg.JobDead {
		t.Fatalf("b1 = %+v, want dead", row)
	}
	fifth := want(claim(t, st, "w", 20, ""), b2)

	// A dead letter replayed while b2 is in flight waits for b2, then
	// takes its seq order again: b1 goes before b3, which waits for both.
	replay := func() {
		t.Helper()
		res, err := st.ReplayDeadLetters(ctx, catalog.DeadLetterFilter{TenantID: "acme"}, time.Now(), false)
		if err != nil || res.Replayed != 1 {
			t.Fatalf("replay = %+v, %v", res, err)
		}
	}
	replay()
	want(claim(t, st, "w", 20, ""))
	complete(t, st, fifth[b2], "w", true, Retry{})
	sixth := want(claim(t, st, "w", 20, ""), b1)
	complete(t, st, sixth[b1], "w", true, Retry{})
	want(claim(t, st, "w", 20, ""), b3)
	if n, err := oncall.New(st.Pool).OrderingBlockedKeys(ctx); err != nil || n != 0 {
		t.Errorf("blocked keys = %d, %v; want 0", n, err)
	}
}

// TestOrderedJobsUnderConcurrentClaimersFailuresAndCrashes runs four
// claimers against one ordered subscription with failures at random and
// crashes (a claim whose worker dies, maybe after delivering, recovered by
// lease expiry). What the "destination" saw first of each event must be in
// seq order per key, and no two jobs of one key are ever held at once.
func TestOrderedJobsUnderConcurrentClaimersFailuresAndCrashes(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	keys := []string{"k1", "k2", "k3", "k4", "k5"}
	var all []string
	for range 12 {
		all = append(all, keys...)
	}
	ids := insertKeyedJobs(t, st, "acme", sub, all)
	seqOf := map[uuid.UUID]int{}
	keyOf := map[uuid.UUID]string{}
	for i, id := range ids {
		seqOf[id], keyOf[id] = i, all[i]
	}

	var (
		mu       sync.Mutex
		holding  = map[string]int{}
		received = map[uuid.UUID]bool{}
		firsts   = map[string][]int{}
		done     int
	)
	deliver := func(id uuid.UUID) {
		mu.Lock()
		defer mu.Unlock()
		if !received[id] {
			received[id] = true
			firsts[keyOf[id]] = append(firsts[keyOf[id]], seqOf[id])
		}
	}
	var wg sync.WaitGroup
	for w := range 4 {
		owner := "w" + string(rune('0'+w))
		rnd := rand.New(rand.NewPCG(uint64(w), 7))
		wg.Go(func() {
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
				mu.Lock()
				finished := done == len(ids)
				mu.Unlock()
				if finished {
					return
				}
				res, err := st.Claim(ctx, ClaimRequest{Owner: owner, Limit: 4, Now: time.Now(), LeaseMargin: testLeaseMargin})
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				for _, j := range res.Jobs {
					mu.Lock()
					holding[*j.OrderingKey]++
					if holding[*j.OrderingKey] > 1 {
						t.Errorf("two jobs of key %s held at once", *j.OrderingKey)
					}
					mu.Unlock()
					switch r := rnd.IntN(10); {
					case r < 3: // fails before reaching the destination
						mu.Lock()
						holding[*j.OrderingKey]--
						mu.Unlock()
						complete(t, st, j, owner, false, Retry{At: time.Now()})
					case r < 4: // the worker dies, after delivering or not
						if rnd.IntN(2) == 0 {
							deliver(j.ID)
						}
						mu.Lock()
						holding[*j.OrderingKey]--
						mu.Unlock()
						if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET lease_until = now() - interval '1 second'
							WHERE id = $1 AND lease_owner = $2`, j.ID, owner); err != nil {
							t.Error(err)
						}
						if _, err := st.RecoverExpiredLeases(ctx, time.Now(), 1000); err != nil {
							t.Error(err)
						}
					default:
						deliver(j.ID)
						mu.Lock()
						holding[*j.OrderingKey]--
						mu.Unlock()
						complete(t, st, j, owner, true, Retry{})
						mu.Lock()
						done++
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	if done != len(ids) {
		t.Fatalf("%d of %d jobs succeeded in time", done, len(ids))
	}
	for _, key := range keys {
		if got := firsts[key]; !slices.IsSorted(got) || len(got) != 12 {
			t.Errorf("key %s: first deliveries in the order %v, want 12 in seq order", key, got)
		}
	}
}

func TestClaimOfUnorderedJobsNeverProbesTheOrderingIndex(t *testing.T) {
	st := ingestStore(t)
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	insertJobs(t, st, "acme", sub, 200, time.Now().Add(-time.Second))
	if _, err := st.Pool.Exec(context.Background(), `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	plan := explainWith(t, st, true, nothingInFlight, claimJobs, pgx.StrictNamedArgs{
		"after": "", "ring_size": ClaimRingSize, "now": time.Now(), "limit": 64, "owner": "owner", "lease_margin_ms": int64(1000), "skip": []string{},
	})
	seen := 0
	for _, line := range strings.Split(plan, "\n") {
		if strings.Contains(line, "Scan using") && strings.Contains(line, "ordering_key") {
			seen++
			if !strings.Contains(line, "(never executed)") {
				t.Errorf("a claim of unordered jobs probes the ordering index:\n%s", plan)
			}
		}
	}
	// Two probes per walked job (an earlier live job of its key, a job of
	// its key in flight), and the parking steps' lookups of the blocker
	// and of a key's next head: all of them skipped without a keyed job.
	if seen < 2 {
		t.Errorf("the claim plan has %d probes of the ordering indexes, want the walk's 2 at least:\n%s", seen, plan)
	}
}
