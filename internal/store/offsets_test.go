package store

import (
	"context"
	"testing"

	"github.com/hubctl/hubctl/internal/event"
)

func TestLoadAndResetOffsets(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	writeBatch(t, st, batchOf(0, 10, discarded(9, event.ReasonSystemEvent)))
	writeBatch(t, st, batchOf(2, 7, discarded(6, event.ReasonSystemEvent)))
	writeBatch(t, st, IngestBatch{Group: "other-group", Topic: ingestTopic, Records: []IngestRecord{discarded(0, event.ReasonSystemEvent)}, NextOffset: 1})

	got, err := st.LoadOffsets(ctx, ingestGroup, map[string][]int32{ingestTopic: {0, 1}, "unknown.topic": {0}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[ingestTopic]) != 1 || got[ingestTopic][0] != 10 {
		t.Fatalf("LoadOffsets = %v, want only %s/0 = 10", got, ingestTopic)
	}

	if err := st.ResetOffset(ctx, ingestGroup, ingestTopic, 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := storedNextOffset(t, st, 0); got != 0 {
		t.Fatalf("after ResetOffset to 0 the stored offset is %d", got)
	}
	// Now the partition's records from 0 are new again.
	res := writeBatch(t, st, batchOf(0, 1, accepted(t, 0, "t-a", testEventID(1), []byte("{}"))))
	if res.Skipped != 0 || len(res.Verdicts) != 1 || res.Verdicts[0].Kind != event.Accept {
		t.Fatalf("after a reset the batch was skipped: %+v", res)
	}
}
