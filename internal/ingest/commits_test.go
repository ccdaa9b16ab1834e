package ingest

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func offsets(topic string, partition int32, next int64) map[string]map[int32]kgo.EpochOffset {
	return map[string]map[int32]kgo.EpochOffset{topic: {partition: {Epoch: 0, Offset: next}}}
}

func isIdle(q *commitQueue) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	select {
	case <-q.idle:
		return true
	default:
		return false
	}
}

// The queue merges polls stored while a commit is in flight into one
// commit of each partition's latest offset, and a flush ends only when
// that has been committed too.
func TestCommitQueueMergesWhatArrivesDuringACommit(t *testing.T) {
	q := newCommitQueue()
	if !isIdle(q) || q.take() != nil {
		t.Fatal("a new queue holds something")
	}

	q.add(offsets("a", 0, 5))
	if isIdle(q) {
		t.Fatal("idle with offsets pending")
	}
	first := q.take()
	if first["a"][0].Offset != 5 {
		t.Fatalf("took %v, want a/0 at 5", first)
	}
	// Stored while the first commit is in flight.
	q.add(offsets("a", 0, 9))
	q.add(offsets("a", 1, 3))
	q.add(offsets("a", 0, 12))
	q.settle()
	if isIdle(q) {
		t.Fatal("idle after the first commit although more was queued during it")
	}
	second := q.take()
	want := map[int32]kgo.EpochOffset{0: {Offset: 12}, 1: {Offset: 3}}
	if len(second) != 1 || !maps.Equal(second["a"], want) {
		t.Fatalf("second commit %v, want a: %v", second, want)
	}
	if q.take() != nil {
		t.Fatal("the merged offsets were handed out twice")
	}
	q.settle()
	if !isIdle(q) {
		t.Fatal("not idle once every queued offset was committed")
	}
	q.flush(context.Background()) // returns at once
}

// Offsets of partitions lost to the group are not committed: the group
// would refuse them.
func TestCommitQueueDropsLostPartitions(t *testing.T) {
	q := newCommitQueue()
	q.add(offsets("a", 0, 5))
	q.add(offsets("a", 1, 7))
	q.drop(map[string][]int32{"a": {0}})
	if got := q.take(); len(got["a"]) != 1 || got["a"][1].Offset != 7 {
		t.Fatalf("took %v, want only a/1", got)
	}
	q.settle()

	q.add(offsets("a", 2, 1))
	q.drop(map[string][]int32{"a": {2}})
	if !isIdle(q) || q.take() != nil {
		t.Fatal("a queue whose only partition was lost is not idle")
	}
}

// The next batch is stored while Kafka still answers the commit of the one
// before it, and what was stored meanwhile is committed in one request
// once the broker answers.
func TestASlowKafkaCommitDoesNotHoldTheNextStore(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a")
	c, reg := e.consumer()
	held, release := make(chan struct{}), make(chan struct{})
	var (
		mu        sync.Mutex
		committed []int64 // partition 0's offset in each commit
		holding   atomic.Bool
	)
	c.commit = func(ctx context.Context, o map[string]map[int32]kgo.EpochOffset) error {
		mu.Lock()
		committed = append(committed, o[testTopic][0].Offset)
		mu.Unlock()
		if holding.CompareAndSwap(false, true) {
			close(held)
			<-release
		}
		return c.commitToKafka(ctx, o)
	}
	m := e.run(c, reg)

	e.produce(cloudEvent(0, "t-a", eventID(0), []byte("{}")))
	<-held
	for i := 1; i < 4; i++ {
		e.produce(cloudEvent(0, "t-a", eventID(i), []byte("{}")))
	}
	e.waitStored(testTopic, 4)
	waitFor(t, "the stored offsets to be queued behind the held commit", func() bool {
		c.commits.mu.Lock()
		defer c.commits.mu.Unlock()
		return c.commits.pending[testTopic][0].Offset == 4
	})
	close(release)
	waitFor(t, "Kafka to hold every stored offset", func() bool { return e.kafkaCommitted(testTopic)[0] == 4 })
	m.stop()

	mu.Lock()
	defer mu.Unlock()
	if len(committed) != 2 || committed[0] != 1 || committed[1] != 4 {
		t.Errorf("commits of partition 0: %v, want [1 4]: the first record's, then the three stored during it in one", committed)
	}
}
