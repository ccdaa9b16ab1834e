package ingest

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// partitionOf is n records of testTopic's partition, at offsets 0..n-1,
// as one poll hands them over.
func partitionOf(partition int32, n int, tenant string) partitionRecords {
	p := partitionRecords{topic: testTopic, partition: partition}
	for i := range n {
		r := cloudEvent(partition, tenant, eventID(int(partition)*1000+i), []byte("{}"))
		r.Offset = int64(i)
		p.records = append(p.records, r)
	}
	return p
}

// TestAPartitionsRecordsAreStoredInBatchesOneAfterTheOther: a poll may hand
// over more of a partition than one transaction should hold; its records go
// in batches of at most MaxBatchRecords, in offset order, each stored.
func TestAPartitionsRecordsAreStoredInBatchesOneAfterTheOther(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a")
	c, _ := e.consumer(func(o *Options) { o.MaxBatchRecords = 10 })
	defer c.Close()

	out := c.handlePartition(context.Background(), context.Background(), make(chan struct{}), partitionOf(1, 35, "t-a"))
	if !out.complete || len(out.stored) != 4 {
		t.Fatalf("stored %d batches, complete %v; want 4 batches, complete", len(out.stored), out.complete)
	}
	for i, b := range out.stored {
		first, last := b.batch.Records[0].Offset, b.batch.Records[len(b.batch.Records)-1].Offset
		if first != int64(i*10) || last != min(int64(i*10+9), 34) || b.result.NextOffset != last+1 {
			t.Errorf("batch %d holds offsets %d..%d and stored up to %d, want %d..%d", i, first, last, b.result.NextOffset, i*10, min(i*10+9, 34))
		}
	}
	if got := e.storedOffsets(testTopic)[1]; got != 35 {
		t.Errorf("stored offset %d, want 35", got)
	}
	if n := e.count(`SELECT count(*) FROM events`); n != 35 {
		t.Errorf("inbox holds %d events, want 35", n)
	}
}

// TestAWaitingRebalanceStopsAPartitionAfterItsBatchInHand: once the group
// wants to rebalance, a partition stores the batch in hand and starts no
// other, so the group waits for one batch, not for the whole poll; what
// it did not store is read again from the first record it left.
func TestAWaitingRebalanceStopsAPartitionAfterItsBatchInHand(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a")
	c, _ := e.consumer(func(o *Options) { o.MaxBatchRecords = 10 })
	defer c.Close()

	giveUp := make(chan struct{})
	close(giveUp)
	out := c.handlePartition(context.Background(), context.Background(), giveUp, partitionOf(2, 35, "t-a"))
	if out.complete || len(out.stored) != 1 || out.stored[0].result.NextOffset != 10 {
		t.Fatalf("stored %d batches, complete %v; want only the first, up to offset 10", len(out.stored), out.complete)
	}
	if got := e.storedOffsets(testTopic)[2]; got != 10 {
		t.Errorf("stored offset %d, want 10", got)
	}

	// The next owner reads from offset 10 on, and what it stores joins
	// up with the first batch: every offset once.
	rest := partitionOf(2, 35, "t-a")
	rest.records = rest.records[10:]
	if out := c.handlePartition(context.Background(), context.Background(), make(chan struct{}), rest); !out.complete {
		t.Fatal("the rest of the partition was not stored")
	}
	assertEveryOffsetOnce(t, e, map[int32]int64{2: 35})
}

// TestAPollStoresItsPartitionsBesideEachOther: records waiting on every
// partition when the consumer starts are all stored, each partition in
// batches of its own; the benchmark BenchmarkIngestPartitions measures
// what storing them side by side buys.
func TestAPollStoresItsPartitionsBesideEachOther(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a")
	const perPartition = 120
	var records []*kgo.Record
	for i := range perPartition * testPartitions {
		records = append(records, cloudEvent(int32(i%testPartitions), "t-a", eventID(i), []byte("{}")))
	}
	e.produce(records...)
	m := e.start(func(o *Options) { o.MaxBatchRecords = 25 })
	e.waitStored(testTopic, perPartition*testPartitions)
	assertEveryOffsetOnce(t, e, map[int32]int64{0: perPartition, 1: perPartition, 2: perPartition})
	if got := m.settledMetric(t, perPartition*testPartitions, "streaming_hub_ingest_records_total", "verdict", "accept"); got != perPartition*testPartitions {
		t.Errorf("accepted %v records, want %d", got, perPartition*testPartitions)
	}
	if got := m.metric(t, "streaming_hub_ingest_batch_records"); got < testPartitions*perPartition/25 {
		t.Errorf("%v batches, want at least %d of at most 25 records", got, testPartitions*perPartition/25)
	}
}
