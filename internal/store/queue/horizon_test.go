package queue

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/event"
)

// addPullSubscription adds a pull subscription of every event of tenant,
// with its cursor at 0, as CreateSubscription makes one.
func addPullSubscription(t *testing.T, st *testStore, tenant string) uuid.UUID {
	t.Helper()
	id, err := uuid.Parse(addTestSubscription(t, st, tenant, "pull", []string{"*"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool.Exec(context.Background(), `INSERT INTO pull_cursors (subscription_id) VALUES ($1)`, id); err != nil {
		t.Fatalf("insert cursor: %v", err)
	}
	return id
}

// eventsOfBatch is a batch of n accepted events of tenant on partition,
// offsets from first, ids from idBase.
func eventsOfBatch(t *testing.T, partition int32, first int64, n int, tenant string, idBase int) IngestBatch {
	t.Helper()
	records := make([]IngestRecord, n)
	for i := range records {
		records[i] = accepted(t, first+int64(i), tenant, testEventID(idBase+i), []byte("{}"))
	}
	return batchOf(partition, first+int64(n), records...)
}

// writeUncommitted writes b as WriteIngestBatch does, in a transaction it
// leaves open for the caller to end.
func writeUncommitted(t *testing.T, st *testStore, b IngestBatch) pgx.Tx {
	t.Helper()
	tx, err := st.Pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	if _, _, err := writeIngestBatch(context.Background(), tx, b); err != nil {
		t.Fatalf("write %s/%d: %v", b.Topic, b.Partition, err)
	}
	return tx
}

func pullAll(t *testing.T, st *testStore, sub uuid.UUID) []int64 {
	t.Helper()
	res, err := st.ReadPull(context.Background(), PullQuery{TenantID: "t-a", SubscriptionID: sub, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	seqs := make([]int64, len(res.Events))
	for i, e := range res.Events {
		seqs[i] = e.Seq
	}
	return seqs
}

// Batches of two partitions commit in the opposite order of their seqs;
// a pull read in between must not move past the one still in flight.
func TestPullReadStopsBelowABatchStillInFlight(t *testing.T) {
	st := ingestStore(t)
	sub := addPullSubscription(t, st, "t-a")

	early := writeUncommitted(t, st, eventsOfBatch(t, 0, 0, 10, "t-a", 0)) // lower seqs, commits last
	writeBatch(t, st, eventsOfBatch(t, 1, 0, 10, "t-a", 100))

	var horizon, lowestInFlight int64
	if err := st.Pool.QueryRow(context.Background(), `SELECT ingest_horizon()`).Scan(&horizon); err != nil {
		t.Fatal(err)
	}
	if err := early.QueryRow(context.Background(), `SELECT min(seq) FROM events`).Scan(&lowestInFlight); err != nil {
		t.Fatal(err)
	}
	if horizon > lowestInFlight {
		t.Fatalf("horizon %d is above seq %d of the batch in flight", horizon, lowestInFlight)
	}
	if got := pullAll(t, st, sub); len(got) != 0 {
		t.Fatalf("a read while the lower batch is in flight returned %v, want nothing", got)
	}
	if err := early.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := pullAll(t, st, sub)
	if len(got) != 20 || !slices.IsSorted(got) || got[0] != lowestInFlight {
		t.Fatalf("after the commit the read returned %v, want all 20 from %d in seq order", got, lowestInFlight)
	}
	if err := st.Pool.QueryRow(context.Background(), `SELECT ingest_horizon()`).Scan(&horizon); err != nil {
		t.Fatal(err)
	}
	if horizon <= got[len(got)-1] {
		t.Errorf("with nothing in flight the horizon is %d, want past the last seq %d", horizon, got[len(got)-1])
	}
}

// Writers of several partitions commit at random moments while a reader
// follows the stream: it must get every entry exactly once, in seq order.
// (Three writers leave the reader one of the pool's four connections.
// Without the horizon the reader skips entries in every run.)
func TestPullReaderSeesEveryEntryWhileBatchesCommitInAnyOrder(t *testing.T) {
	st := ingestStore(t)
	sub := addPullSubscription(t, st, "t-a")
	const partitions, batches, perBatch = 3, 30, 10
	ctx := context.Background()

	var writers sync.WaitGroup
	for p := range int32(partitions) {
		writers.Go(func() {
			for b := range batches {
				tx, err := st.Pool.Begin(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				batch := eventsOfBatch(t, p, int64(b*perBatch), perBatch, "t-a", (int(p)*batches+b)*perBatch)
				if _, _, err := writeIngestBatch(ctx, tx, batch); err != nil {
					t.Errorf("write: %v", err)
					_ = tx.Rollback(ctx)
					return
				}
				time.Sleep(time.Millisecond + time.Duration(rand.IntN(5000))*time.Microsecond)
				if err := tx.Commit(ctx); err != nil {
					t.Errorf("commit: %v", err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { writers.Wait(); close(done) }()

	var got []int64
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		res, err := st.ReadPull(ctx, PullQuery{TenantID: "t-a", SubscriptionID: sub, Limit: 17})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Events {
			got = append(got, e.Seq)
		}
		if finished && len(res.Events) == 0 {
			break
		}
	}
	if t.Failed() {
		return
	}
	rows, err := st.Pool.Query(ctx, `SELECT event_seq FROM pull_entries WHERE subscription_id = $1 ORDER BY event_seq`, sub)
	if err != nil {
		t.Fatal(err)
	}
	all, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != partitions*batches*perBatch {
		t.Fatalf("%d entries stored, want %d", len(all), partitions*batches*perBatch)
	}
	if !slices.Equal(got, all) {
		missing := 0
		for _, s := range all {
			if _, found := slices.BinarySearch(got, s); !found {
				missing++
			}
		}
		t.Fatalf("the reader got %d entries (%d of the %d stored never), want each once in seq order", len(got), missing, len(all))
	}
}

// withSubject is an accepted record of an event with a CloudEvents subject.
func withSubject(t *testing.T, offset int64, tenant, id, subject string) IngestRecord {
	t.Helper()
	r := accepted(t, offset, tenant, id, []byte("{}"))
	r.Headers = append(r.Headers, event.Header{Key: "ce-subject", Value: []byte(subject)})
	ev, v, ok := event.Parse(r.Headers, r.Value, event.Options{})
	if !ok {
		t.Fatalf("test event does not parse: %v", v)
	}
	r.Event = ev
	return r
}

// An ordered subscription's key gets events from two partitions whose
// batches commit in the opposite order of their seqs: the claim must not
// start the later event while the earlier one is still being ingested.
func TestOrderedClaimWaitsForALowerSeqStillInFlight(t *testing.T) {
	st := ingestStore(t)
	sub := addTestSubscription(t, st, "t-a", "webhook", []string{"*"})
	if _, err := st.Pool.Exec(context.Background(), `UPDATE subscriptions SET ordering = 'subject' WHERE id = $1`, sub); err != nil {
		t.Fatal(err)
	}
	early := writeUncommitted(t, st, batchOf(0, 1, withSubject(t, 0, "t-a", testEventID(0), "account-1")))
	writeBatch(t, st, batchOf(1, 1, withSubject(t, 0, "t-a", testEventID(1), "account-1")))

	if got := claim(t, st, "w", 10, ""); len(got.Jobs) != 0 {
		t.Fatalf("claimed %d jobs while the key's first event is still being ingested, want none", len(got.Jobs))
	}
	if err := early.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := claim(t, st, "w", 10, "")
	if len(got.Jobs) != 1 || got.Jobs[0].Event.ID != testEventID(0) {
		t.Fatalf("after the commit the claim took %+v, want the key's first event alone", got.Jobs)
	}
}
