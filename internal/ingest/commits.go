package ingest

import (
	"context"
	"log/slog"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka commits leave the poll loop. The database's stored offsets are
// what a partition's next owner resumes from (queue.WriteIngestBatch); the
// group's committed offsets only keep Kafka's own tools (lag, resets) in
// step. Waiting for each commit before the next poll put a broker round
// trip, a replicated write on a real cluster, between every store and the
// records that arrived during it. A commit is instead queued when its
// poll is stored and sent by a goroutine of its own; polls stored while
// one is in flight are merged into the next, so a slow broker means fewer,
// later commits, never a growing queue.
//
// Where the commit must have landed, the queue is flushed first: before a
// revoke hands partitions on (as a synchronous commit in
// OnPartitionsRevoked would) and when Run ends.

// commitQueue holds the stored offsets not yet committed to Kafka: the
// latest of each partition, and whether a commit is in flight.
type commitQueue struct {
	mu       sync.Mutex
	pending  map[string]map[int32]kgo.EpochOffset
	inFlight bool
	// idle is closed while nothing is pending or in flight; a flush waits
	// on it.
	idle chan struct{}
	// wake tells the sender that offsets are pending.
	wake chan struct{}
}

func newCommitQueue() *commitQueue {
	idle := make(chan struct{})
	close(idle)
	return &commitQueue{idle: idle, wake: make(chan struct{}, 1)}
}

// add queues a poll's stored offsets. Polls come in order, so a
// partition's offset replaces the one pending before it.
func (q *commitQueue) add(offsets map[string]map[int32]kgo.EpochOffset) {
	if len(offsets) == 0 {
		return
	}
	q.mu.Lock()
	if q.pending == nil {
		q.pending = make(map[string]map[int32]kgo.EpochOffset, len(offsets))
	}
	for topic, partitions := range offsets {
		if q.pending[topic] == nil {
			q.pending[topic] = make(map[int32]kgo.EpochOffset, len(partitions))
		}
		for p, o := range partitions {
			q.pending[topic][p] = o
		}
	}
	q.markBusy()
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// markBusy opens a new idle channel if the queue was idle; q.mu is held.
func (q *commitQueue) markBusy() {
	select {
	case <-q.idle:
		q.idle = make(chan struct{})
	default:
	}
}

// take hands the pending offsets to the sender, which commits them and
// then calls settle; nil when nothing is pending.
func (q *commitQueue) take() map[string]map[int32]kgo.EpochOffset {
	q.mu.Lock()
	defer q.mu.Unlock()
	offsets := q.pending
	q.pending = nil
	q.inFlight = offsets != nil
	return offsets
}

// settle ends the commit take handed out.
func (q *commitQueue) settle() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inFlight = false
	if q.pending == nil {
		close(q.idle)
	}
}

// drop forgets the pending offsets of partitions this member no longer
// owns: the group would refuse them.
func (q *commitQueue) drop(partitions map[string][]int32) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for topic, ps := range partitions {
		for _, p := range ps {
			delete(q.pending[topic], p)
		}
		if len(q.pending[topic]) == 0 {
			delete(q.pending, topic)
		}
	}
	if len(q.pending) == 0 {
		q.pending = nil
		if !q.inFlight {
			select {
			case <-q.idle:
			default:
				close(q.idle)
			}
		}
	}
}

// flush waits until every offset queued so far has been committed (or
// its commit has failed), or ctx ends.
func (q *commitQueue) flush(ctx context.Context) {
	q.mu.Lock()
	idle := q.idle
	q.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
	}
}

// sendCommits commits what the queue holds until stop is closed, then
// returns. Run flushes the queue before it stops the sender.
func (c *Consumer) sendCommits(work context.Context, stop <-chan struct{}) {
	for {
		select {
		case <-c.commits.wake:
		case <-stop:
			return
		}
		for offsets := c.commits.take(); offsets != nil; offsets = c.commits.take() {
			c.commitStored(work, offsets)
			c.commits.settle()
		}
	}
}

// commitStored commits one set of stored offsets to Kafka.
func (c *Consumer) commitStored(work context.Context, offsets map[string]map[int32]kgo.EpochOffset) {
	if c.Fenced() {
		return // the group refuses this member's commits now
	}
	err := c.commit(work, offsets)
	if err == nil {
		return
	}
	if isFenced(err) {
		c.markFenced()
		return
	}
	// The stored offsets still make a restart resume correctly; the next
	// successful commit catches Kafka up.
	c.metrics.commitFailures.Inc()
	c.log.Warn("Kafka offset commit failed after the batch was stored", slog.Any("error", err))
}
