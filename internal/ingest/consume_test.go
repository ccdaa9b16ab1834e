package ingest

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestSameRecordTwiceIsOneInboxRow(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a")
	m := e.start()
	rec := cloudEvent(0, "t-a", eventID(1), []byte(`{"amount":1}`))
	again := *rec
	e.produce(rec, &again)
	e.waitStored(testTopic, 2)

	if n := e.count(`SELECT count(*) FROM events WHERE tenant_id = 't-a' AND id = $1`, eventID(1)); n != 1 {
		t.Fatalf("inbox rows for the event = %d, want 1", n)
	}
	if got := m.settledMetric(t, 1, "streaming_hub_ingest_records_total", "verdict", "accept"); got != 1 {
		t.Errorf("accepted = %v, want 1", got)
	}
	if got := m.settledMetric(t, 1, "streaming_hub_ingest_records_total", "verdict", "discard", "reason", "duplicate"); got != 1 {
		t.Errorf("duplicate discards = %v, want 1", got)
	}
}

// TestCrashBetweenDatabaseAndKafkaCommit stores batches but loses every
// Kafka commit, as a process killed between the two would. The next member
// resumes from the stored offset: nothing is read twice, nothing skipped.
func TestCrashBetweenDatabaseAndKafkaCommit(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a")
	var dropped atomic.Int64
	c, reg := e.consumer()
	c.commit = func(context.Context, map[string]map[int32]kgo.EpochOffset) error {
		dropped.Add(1)
		return nil
	}
	first := e.run(c, reg)

	for i := range 30 {
		e.produce(cloudEvent(int32(i%testPartitions), "t-a", eventID(i), []byte("{}")))
	}
	e.waitStored(testTopic, 30)
	first.stop()
	if dropped.Load() == 0 {
		t.Fatal("the crashing member never reached its Kafka commit")
	}
	if committed := e.kafkaCommitted(testTopic); len(committed) != 0 {
		t.Fatalf("Kafka holds commits %v although every commit was lost", committed)
	}

	for i := 30; i < 45; i++ {
		e.produce(cloudEvent(int32(i%testPartitions), "t-a", eventID(i), []byte("{}")))
	}
	second := e.start()
	e.waitStored(testTopic, 45)
	second.stop()

	if n := e.count(`SELECT count(*) FROM events`); n != 45 {
		t.Errorf("inbox holds %d events, want 45", n)
	}
	if got := second.metric(t, "streaming_hub_ingest_records_total", "verdict", "accept"); got != 15 {
		t.Errorf("the restarted member accepted %v records, want only the 15 new ones", got)
	}
	if got := second.metric(t, "streaming_hub_ingest_records_total", "verdict", "discard"); got != 0 {
		t.Errorf("the restarted member discarded %v records, want 0: it read stored records again", got)
	}
	if got := second.metric(t, "streaming_hub_ingest_replayed_records_total"); got != 0 {
		t.Errorf("the restarted member replayed %v stored records, want 0", got)
	}
	assertEveryOffsetOnce(t, e, map[int32]int64{0: 15, 1: 15, 2: 15})
	// The member that shut down cleanly committed to Kafka what it stored.
	if committed, stored := e.kafkaCommitted(testTopic), e.storedOffsets(testTopic); !maps.Equal(committed, stored) {
		t.Errorf("after a clean shutdown Kafka's commits are %v, the stored offsets %v", committed, stored)
	}
}

// assertEveryOffsetOnce checks that the inbox holds exactly one event per
// offset of each partition, from 0 up to want[partition].
func assertEveryOffsetOnce(t *testing.T, e *env, want map[int32]int64) {
	t.Helper()
	rows, err := e.store.Pool.Query(context.Background(),
		`SELECT kafka_partition, kafka_offset FROM events WHERE topic = $1 ORDER BY kafka_partition, kafka_offset`, testTopic)
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[int32][]int64)
	var p int32
	var off int64
	if _, err := pgx.ForEachRow(rows, []any{&p, &off}, func() error { got[p] = append(got[p], off); return nil }); err != nil {
		t.Fatal(err)
	}
	for partition, n := range want {
		offsets := got[partition]
		ok := int64(len(offsets)) == n
		for i := 0; ok && i < len(offsets); i++ {
			ok = offsets[i] == int64(i)
		}
		if !ok {
			t.Errorf("partition %d holds offsets %v, want each of 0..%d once", partition, offsets, n-1)
		}
	}
}

// TestRebalanceMidStream produces while a second member joins and the first
// leaves: every record lands in the inbox exactly once.
func TestRebalanceMidStream(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a")
	const total = 1500
	first := e.start(func(o *Options) { o.MaxBatchRecords = 50 })

	var produced atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range total {
			e.produce(cloudEvent(int32(i%testPartitions), "t-a", eventID(i), []byte("{}")))
			produced.Add(1)
			// A steady stream of about five seconds: a member joining
			// waits up to a heartbeat (3s) for the group to rebalance.
			time.Sleep(3 * time.Millisecond)

		}
	})
	waitFor(t, "a fifth of the records produced", func() bool { return produced.Load() >= total/5 })
	second := e.start(func(o *Options) { o.MaxBatchRecords = 50 })
	waitFor(t, "the second member to join", second.Ready)
	waitFor(t, "two thirds of the records produced", func() bool { return produced.Load() >= 2*total/3 })
	first.stop()
	if produced.Load() == total {
		t.Fatal("the stream ended before the first member left; the test proves nothing")
	}
	wg.Wait()
	e.waitStored(testTopic, total)

	if n := e.count(`SELECT count(*) FROM events`); n != total {
		t.Errorf("inbox holds %d events, want %d", n, total)
	}
	assertEveryOffsetOnce(t, e, map[int32]int64{0: total / 3, 1: total / 3, 2: total / 3})
	accepted := first.metric(t, "streaming_hub_ingest_records_total", "verdict", "accept") +
		second.metric(t, "streaming_hub_ingest_records_total", "verdict", "accept")
	duplicates := first.metric(t, "streaming_hub_ingest_records_total", "reason", "duplicate") +
		second.metric(t, "streaming_hub_ingest_records_total", "reason", "duplicate")
	if accepted != total || duplicates != 0 {
		t.Errorf("members accepted %v and judged %v duplicates, want %d and 0", accepted, duplicates, total)
	}
	if got := first.metric(t, "streaming_hub_ingest_records_total"); got == 0 {
		t.Errorf("the first member never ingested anything")
	}
	if got := second.metric(t, "streaming_hub_ingest_records_total"); got == 0 {
		t.Errorf("the second member never ingested anything: no rebalance happened")
	}
}

// TestDatabaseOutageMidStream takes the database away while records keep
// arriving: ingest pauses, commits nothing to Kafka it did not store, and
// resumes by itself when the database is back.
func TestDatabaseOutageMidStream(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a")
	m := e.start()
	for i := range 9 {
		e.produce(cloudEvent(int32(i%testPartitions), "t-a", eventID(i), []byte("{}")))
	}
	e.waitStored(testTopic, 9)
	waitFor(t, "Kafka commits of the first records", func() bool {
		return sum(e.kafkaCommitted(testTopic)) == 9
	})

	restore := e.cutDatabase()
	for i := 9; i < 30; i++ {
		e.produce(cloudEvent(int32(i%testPartitions), "t-a", eventID(i), []byte("{}")))
	}
	waitFor(t, "ingest to hit the outage", func() bool {
		return m.metric(t, "streaming_hub_ingest_store_retries_total") >= 3
	})
	if committed := e.kafkaCommitted(testTopic); sum(committed) != 9 {
		t.Fatalf("during the outage Kafka's commits moved to %v; nothing past the 9 stored records may be committed", committed)
	}

	restore()
	e.waitStored(testTopic, 30)
	waitFor(t, "Kafka commits to catch up", func() bool { return sum(e.kafkaCommitted(testTopic)) == 30 })
	if n := e.count(`SELECT count(*) FROM events`); n != 30 {
		t.Errorf("inbox holds %d events, want 30", n)
	}
	assertEveryOffsetOnce(t, e, map[int32]int64{0: 10, 1: 10, 2: 10})
}

func sum(offsets map[int32]int64) int64 {
	var n int64
	for _, o := range offsets {
		n += o
	}
	return n
}

// cutDatabase refuses new connections to the test database and ends the open
// ones, as a database outage would; the returned function lets them in again
// and drops the pool's connections the outage killed, so the test's own
// queries never draw one (the consumer retries on them; a helper would fail).
func (e *env) cutDatabase() (restore func()) {
	e.t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(e.dsn)
	if err != nil {
		e.t.Fatal(err)
	}
	db := cfg.Database
	cfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		e.t.Fatalf("admin connection: %v", err)
	}
	ident := pgx.Identifier{db}.Sanitize()
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+ident+" ALLOW_CONNECTIONS false"); err != nil {
		e.t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, db); err != nil {
		e.t.Fatal(err)
	}
	var once sync.Once
	restore = func() {
		once.Do(func() {
			if _, err := admin.Exec(ctx, "ALTER DATABASE "+ident+" ALLOW_CONNECTIONS true"); err != nil {
				e.t.Errorf("let connections in again: %v", err)
			}
			_ = admin.Close(ctx)
			e.store.Pool.Reset()
		})
	}
	e.t.Cleanup(restore)
	return restore
}

// TestTenantOrderWithinPartition: one tenant's events on one partition get
// increasing seq in partition order, whatever is interleaved with them.
func TestTenantOrderWithinPartition(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a", "t-b")
	e.start(func(o *Options) { o.MaxBatchRecords = 37 }) // many small batches
	var records []*kgo.Record
	for i := range 300 {
		records = append(records, cloudEvent(1, []string{"t-a", "t-b"}[i%2], eventID(i), []byte("{}")))
	}
	e.produce(records...)
	e.waitStored(testTopic, 300)

	for _, tenant := range []string{"t-a", "t-b"} {
		rows, err := e.store.Pool.Query(context.Background(), `SELECT kafka_offset FROM events WHERE tenant_id = $1 ORDER BY seq`, tenant)
		if err != nil {
			t.Fatal(err)
		}
		offsets, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			t.Fatal(err)
		}
		if len(offsets) != 150 || !slices.IsSorted(offsets) {
			t.Errorf("%s: offsets in seq order %v, want 150 ascending", tenant, offsets)
		}
	}
}

func TestExcludedTopicsAreNeverRead(t *testing.T) {
	const excluded = "lerian.streaming.midaz_transaction.dlq"
	const unmatched = "other.midaz_transaction.posted"
	e := newEnv(t, testTopic, excluded, unmatched)
	e.addTenants("t-a")
	m := e.start()
	for i, topic := range []string{excluded, unmatched, testTopic} {
		rec := cloudEvent(0, "t-a", eventID(i), []byte("{}"))
		rec.Topic = topic
		e.produce(rec)
	}
	e.waitStored(testTopic, 1)
	// Every topic existed before the member started, so the metadata that
	// found the wanted one listed the others too: the choice is made.
	if got := m.client.GetConsumeTopics(); !slices.Equal(got, []string{testTopic}) {
		t.Errorf("consuming %v, want only %s", got, testTopic)
	}
	if n := e.count(`SELECT count(*) FROM kafka_offsets WHERE topic <> $1`, testTopic); n != 0 {
		t.Errorf("offsets stored for %d unwanted partitions", n)
	}
	if got := m.metric(t, "streaming_hub_ingest_records_total"); got != 1 {
		t.Errorf("%v records ingested, want only the wanted topic's 1", got)
	}
}

// TestStoredOffsetBeyondTheLogEnd covers a topic recreated under a database
// that remembers the old one (or `hubctl dev` on a fresh embedded broker).
func TestStoredOffsetBeyondTheLogEnd(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a")
	// A position stored before topic ids were kept.
	e.exec(`INSERT INTO kafka_offsets (consumer_group, topic, kafka_partition, next_offset) VALUES ($1, $2, 0, 5000)`, testGroup, testTopic)
	e.produce(cloudEvent(0, "t-a", eventID(1), []byte("{}")), cloudEvent(0, "t-a", eventID(2), []byte("{}")))
	e.start()
	waitFor(t, "the recreated partition to be read", func() bool { return e.count(`SELECT count(*) FROM events`) == 2 })
	waitFor(t, "the stored offset to follow the new log", func() bool { return e.storedOffsets(testTopic)[0] == 2 })
}

func TestReadyOnlyWhileRunningAndJoined(t *testing.T) {
	e := newEnv(t)
	c, reg := e.consumer()
	if c.Ready() {
		t.Fatal("ready before Run")
	}
	m := e.run(c, reg)
	waitFor(t, "ready", c.Ready)
	m.stop()
	if c.Ready() {
		t.Fatal("still ready after Run returned")
	}
	if err := c.Run(context.Background()); err == nil {
		t.Fatal("a second Run did not fail")
	}
}

// TestRebalanceWhileTheDatabaseIsDown: a member stuck retrying a batch gives
// it up when another member joins, instead of holding the group until it is
// evicted; the records it had fetched are read again, and once the database
// is back every record is stored exactly once.
func TestRebalanceWhileTheDatabaseIsDown(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a")
	first := e.start()
	for i := range 9 {
		e.produce(cloudEvent(int32(i%testPartitions), "t-a", eventID(i), []byte("{}")))
	}
	e.waitStored(testTopic, 9)

	restore := e.cutDatabase()
	for i := 9; i < 18; i++ {
		e.produce(cloudEvent(int32(i%testPartitions), "t-a", eventID(i), []byte("{}")))
	}
	waitFor(t, "the first member to hit the outage", func() bool {
		return first.metric(t, "streaming_hub_ingest_store_retries_total") > 0
	})
	second := e.start() // joins the group at once; its roster waits for the database
	waitFor(t, "the first member to give its batch up for the rebalance", func() bool {
		return first.metric(t, "streaming_hub_ingest_batches_abandoned_total") > 0
	})
	if committed := e.kafkaCommitted(testTopic); sum(committed) != 9 {
		t.Fatalf("Kafka's commits moved to %v during the outage; only the 9 stored records may be committed", committed)
	}

	restore()
	e.waitStored(testTopic, 18)
	if n := e.count(`SELECT count(*) FROM events`); n != 18 {
		t.Errorf("inbox holds %d events, want 18", n)
	}
	assertEveryOffsetOnce(t, e, map[int32]int64{0: 6, 1: 6, 2: 6})
	duplicates := first.metric(t, "streaming_hub_ingest_records_total", "reason", "duplicate") +
		second.metric(t, "streaming_hub_ingest_records_total", "reason", "duplicate")
	if duplicates != 0 {
		t.Errorf("%v records judged duplicates: a stored record was read again", duplicates)
	}
}
