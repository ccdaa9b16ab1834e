package ingest

import (
	"context"
	"testing"
	"time"
)

// ingestLock is store's ingest advisory lock key ("hubctl" in ASCII): a
// test holding it stalls every batch write, as a database that stopped
// committing would.
const ingestLock int64 = 0x6875_6263_746c

// TestConsumerLagMovesWhileIngestStalls measures the lag of a consumer
// that cannot store (the database holds its batches), then watches it fall
// to zero once the batches commit.
func TestConsumerLagMovesWhileIngestStalls(t *testing.T) {
	e := newEnv(t)
	e.addTenants("acme")
	tx, err := e.store.Pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(context.Background(), `SELECT pg_advisory_xact_lock($1)`, ingestLock); err != nil {
		t.Fatal(err)
	}

	m := e.start(func(o *Options) { o.LagInterval = 50 * time.Millisecond })
	waitFor(t, "the consumer to join", m.Ready)
	for i := range 10 {
		e.produce(cloudEvent(0, "acme", eventID(i), []byte(`{}`)))
	}
	for i := range 4 {
		e.produce(cloudEvent(1, "acme", eventID(100+i), []byte(`{}`)))
	}
	lag := func(partition string) float64 {
		return m.metric(t, "streaming_hub_kafka_consumer_lag_records", "topic", testTopic, "partition", partition)
	}
	waitFor(t, "the lag of the stalled partitions", func() bool { return lag("0") == 10 && lag("1") == 4 && lag("2") == 0 })
	if m.metric(t, "streaming_hub_ingest_last_batch_timestamp_seconds") != 0 {
		t.Error("a batch counts as stored while the database held it")
	}

	if err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.waitStored(testTopic, 14)
	waitFor(t, "the lag to fall to zero", func() bool { return lag("0") == 0 && lag("1") == 0 })
	if last := m.metric(t, "streaming_hub_ingest_last_batch_timestamp_seconds"); time.Since(time.Unix(int64(last), 0)) > time.Minute {
		t.Errorf("last stored batch at %v, want just now", time.Unix(int64(last), 0))
	}
}
