package queue

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/event"
)

var (
	oldTopicID = uuid.MustParse("11111111-1111-4111-8111-111111111111")
	newTopicID = uuid.MustParse("22222222-2222-4222-8222-222222222222")
)

// batchIn is batchOf for the incarnation of the topic that id names.
func batchIn(id uuid.UUID, partition int32, next int64, records ...IngestRecord) IngestBatch {
	b := batchOf(partition, next, records...)
	b.TopicID = id
	return b
}

func loadOffset(t *testing.T, st *testStore, partition int32) StoredOffset {
	t.Helper()
	got, err := st.LoadOffsets(context.Background(), ingestGroup, map[string][]int32{ingestTopic: {partition}})
	if err != nil {
		t.Fatal(err)
	}
	return got[ingestTopic][partition]
}

func TestLoadAndResetOffsets(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	writeBatch(t, st, batchIn(oldTopicID, 0, 10, discarded(9, event.ReasonSystemEvent)))
	writeBatch(t, st, batchOf(2, 7, discarded(6, event.ReasonSystemEvent)))
	writeBatch(t, st, IngestBatch{Group: "other-group", Topic: ingestTopic, Records: []IngestRecord{discarded(0, event.ReasonSystemEvent)}, NextOffset: 1})

	got, err := st.LoadOffsets(ctx, ingestGroup, map[string][]int32{ingestTopic: {0, 1}, "unknown.topic": {0}})
	if err != nil {
		t.Fatal(err)
	}
	want := StoredOffset{Next: 10, TopicID: oldTopicID}
	if len(got) != 1 || len(got[ingestTopic]) != 1 || got[ingestTopic][0] != want {
		t.Fatalf("LoadOffsets = %v, want only %s/0 = %+v", got, ingestTopic, want)
	}

	// A reset from a position the partition no longer holds moves nothing.
	if moved, err := st.ResetOffset(ctx, ingestGroup, ingestTopic, 0, StoredOffset{Next: 9, TopicID: oldTopicID}, StoredOffset{}); err != nil || moved {
		t.Fatalf("ResetOffset from a stale position = %v, %v; want not moved", moved, err)
	}
	if moved, err := st.ResetOffset(ctx, ingestGroup, ingestTopic, 0, want, StoredOffset{Next: 0, TopicID: newTopicID}); err != nil || !moved {
		t.Fatalf("ResetOffset = %v, %v; want moved", moved, err)
	}
	if got := loadOffset(t, st, 0); got != (StoredOffset{Next: 0, TopicID: newTopicID}) {
		t.Fatalf("after ResetOffset the stored position is %+v", got)
	}
	// Now the partition's records from 0 are new again.
	res := writeBatch(t, st, batchIn(newTopicID, 0, 1, accepted(t, 0, "t-a", testEventID(1), []byte("{}"))))
	if res.Skipped != 0 || len(res.Verdicts) != 1 || res.Verdicts[0].Kind != event.Accept {
		t.Fatalf("after a reset the batch was skipped: %+v", res)
	}
	// A row written without an id resets from the unknown id.
	if moved, err := st.ResetOffset(ctx, ingestGroup, ingestTopic, 2, StoredOffset{Next: 7}, StoredOffset{Next: 3, TopicID: newTopicID}); err != nil || !moved {
		t.Fatalf("ResetOffset of a row without an id = %v, %v; want moved", moved, err)
	}
}

// TestStoredOffsetAppliesToItsIncarnationOnly: a batch of a topic deleted
// and created again is never judged against the old topic's offset, and a
// batch of the old topic written late changes nothing.
func TestStoredOffsetAppliesToItsIncarnationOnly(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	writeBatch(t, st, batchIn(oldTopicID, 0, 50, discarded(49, event.ReasonSystemEvent)))

	// The new incarnation's first records, below the old stored offset:
	// the write refuses them rather than skipping them as stored.
	fresh := batchIn(newTopicID, 0, 2,
		accepted(t, 0, "t-a", testEventID(1), []byte("{}")), accepted(t, 1, "t-a", testEventID(2), []byte("{}")))
	res := writeBatch(t, st, fresh)
	if !res.OtherIncarnation || res.Skipped != 0 || len(res.Verdicts) != 0 {
		t.Fatalf("a batch of another incarnation = %+v, want refused as OtherIncarnation", res)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM events`); n != 0 {
		t.Fatalf("a refused batch stored %d events", n)
	}

	// Ingest moves the position to the new incarnation when it is assigned;
	// from then on its records are stored and the old one's are refused.
	if moved, err := st.ResetOffset(ctx, ingestGroup, ingestTopic, 0, StoredOffset{Next: 50, TopicID: oldTopicID}, StoredOffset{TopicID: newTopicID}); err != nil || !moved {
		t.Fatalf("ResetOffset = %v, %v", moved, err)
	}
	if res := writeBatch(t, st, fresh); res.OtherIncarnation || len(res.Verdicts) != 2 || res.Verdicts[0].Kind != event.Accept || res.Verdicts[1].Kind != event.Accept {
		t.Fatalf("the new incarnation's batch = %+v, want both accepted", res)
	}
	late := batchIn(oldTopicID, 0, 51, accepted(t, 50, "t-a", testEventID(3), []byte("{}")))
	if res := writeBatch(t, st, late); !res.OtherIncarnation {
		t.Fatalf("a late batch of the old incarnation = %+v, want refused", res)
	}
	if got := loadOffset(t, st, 0); got != (StoredOffset{Next: 2, TopicID: newTopicID}) {
		t.Fatalf("stored position %+v, want the new incarnation's 2", got)
	}

	// A row without an id (written before ids were kept) takes the first
	// id a batch brings, and from then on tells incarnations apart.
	writeBatch(t, st, batchOf(1, 5, discarded(4, event.ReasonSystemEvent)))
	writeBatch(t, st, batchIn(oldTopicID, 1, 6, discarded(5, event.ReasonSystemEvent)))
	if got := loadOffset(t, st, 1); got != (StoredOffset{Next: 6, TopicID: oldTopicID}) {
		t.Fatalf("a row without an id became %+v, want the batch's id at 6", got)
	}
	if res := writeBatch(t, st, batchIn(newTopicID, 1, 1, discarded(0, event.ReasonSystemEvent))); !res.OtherIncarnation {
		t.Fatalf("after adopting an id the row took another incarnation's batch: %+v", res)
	}
}
