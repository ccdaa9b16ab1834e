package ingest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestTopUpWaitFor(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name           string
		polled, stored time.Duration
		want           time.Duration
		wantOK         bool
	}{
		{"idle: the poll waited for its records", 50 * ms, 10 * ms, 0, false},
		{"nothing stored before", 0, 0, 0, false},
		{"a store too short for more to arrive", 0, ms / 2, 0, false},
		{"a long store: the limit", 0, 10 * ms, 2 * ms, true},
		{"a short store: half of it", 0, 3 * ms, 1500 * time.Microsecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := topUpWaitFor(tc.polled, tc.stored, 2*ms)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("topUpWaitFor(%v, %v) = %v, %v; want %v, %v", tc.polled, tc.stored, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// Records produced while a batch is stored are stored with the fetch that
// was buffered behind it, in one batch, not one store later.
func TestRecordsArrivingDuringAStoreJoinTheNextBatch(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a")
	// The consumer's clock stands still but for the test's moves: a poll
	// then never measures as one that waited for its records (a busy
	// machine can stall a buffered poll past topUpAfter), and the store
	// held below measures long enough that half of it covers topUpWait.
	base := time.Now()
	var skew atomic.Int64
	c, reg := e.consumer(func(o *Options) {
		o.Clock = func() time.Time { return base.Add(time.Duration(skew.Load())) }
	})
	// Long enough for an in-process fetch under the race detector.
	c.topUpWait = 10 * time.Second
	held, release := make(chan struct{}), make(chan struct{})
	first := true
	c.commit = func(ctx context.Context, offsets map[string]map[int32]kgo.EpochOffset) error {
		if first {
			first = false
			close(held)
			<-release
		}
		return c.commitToKafka(ctx, offsets)
	}
	m := e.run(c, reg)

	e.produce(cloudEvent(0, "t-a", eventID(1), []byte("{}")))
	<-held
	// The client sent its next fetch when the first batch was polled: the
	// first record produced now is what that fetch brings back and keeps
	// buffered; the second waits in the broker.
	e.produce(cloudEvent(0, "t-a", eventID(2), []byte("{}")))
	waitFor(t, "the fetch behind the held store to bring back the second record", func() bool {
		return c.client.BufferedFetchRecords() >= 1
	})
	e.produce(cloudEvent(0, "t-a", eventID(3), []byte("{}")))
	// A long store: half of it bounds how long the next poll waits for
	// the fetch that brings the third record.
	skew.Add(int64(2 * c.topUpWait))
	close(release)
	e.waitStored(testTopic, 3)

	if batches := m.settledMetric(t, 2, "streaming_hub_ingest_batch_records"); batches != 2 {
		t.Errorf("stored in %v batches, want 2: the first record, then the buffered and the waiting one together", batches)
	}
}
