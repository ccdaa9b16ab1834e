package ingest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/store/queue"
)

func TestDecideStart(t *testing.T) {
	committed := func(o int64) kgo.Offset { return kgo.NewOffset().At(o).WithEpoch(3) }
	noCommit := kgo.NewOffset().AtStart() // what franz-go passes for a partition without a commit
	oldID := uuid.MustParse("11111111-1111-4111-8111-111111111111")
	newID := uuid.MustParse("22222222-2222-4222-8222-222222222222")
	stored := func(next int64, id uuid.UUID) queue.StoredOffset { return queue.StoredOffset{Next: next, TopicID: id} }
	// in is a partition with a stored position and known bounds.
	in := func(kafka kgo.Offset, pos queue.StoredOffset, topicID uuid.UUID, logStart, logEnd int64) partitionStart {
		return partitionStart{kafka: kafka, stored: pos, hasStored: true, topicID: topicID, logStart: logStart, logEnd: logEnd, hasBounds: true}
	}
	keep := func(o kgo.Offset, s startSource) startDecision { return startDecision{offset: o, source: s} }
	reset := func(o kgo.Offset, s startSource, next int64, id uuid.UUID) startDecision {
		return startDecision{offset: o, source: s, reset: stored(next, id), doReset: true}
	}
	tests := []struct {
		name string
		in   partitionStart
		want startDecision
	}{
		{"nothing stored", partitionStart{kafka: committed(40)}, keep(committed(40), startAtKafka)},
		{"nothing stored, nothing committed", partitionStart{kafka: noCommit}, keep(noCommit, startAtKafka)},
		{"stored equals committed", in(committed(40), stored(40, oldID), oldID, 0, 90), keep(committed(40), startAtKafka)},
		{"Kafka commit lost", in(committed(40), stored(55, oldID), oldID, 0, 90), keep(at(55), startAtStored)},
		{"stored but never committed", in(noCommit, stored(55, oldID), oldID, 0, 90), keep(at(55), startAtStored)},
		{"stored at the log end", in(noCommit, stored(90, oldID), oldID, 0, 90), keep(at(90), startAtStored)},
		// Kafka ahead of the database: a restored backup. Kafka's
		// position is the one that does not re-read.
		{"Kafka ahead", in(committed(70), stored(55, oldID), oldID, 0, 90), keep(committed(70), startAtKafka)},
		{"Kafka ahead, beyond the log end", in(committed(95), stored(55, oldID), oldID, 0, 90), keep(at(90), startAtKafka)},
		// The same incarnation's log ends before the stored offset: the
		// broker lost its tail. New records are written from the end on.
		{"lost tail", in(committed(95), stored(100, oldID), oldID, 0, 90), reset(at(90), startTruncated, 90, oldID)},
		{"lost tail of a log that starts later", in(noCommit, stored(100, oldID), oldID, 40, 90), reset(at(90), startTruncated, 90, oldID)},
		// Another incarnation: its offsets say nothing about the new log,
		// whether they are beyond its end or within it.
		{"recreated, stored beyond the new end", in(noCommit, stored(5000, oldID), newID, 0, 3), reset(noCommit, startRecreated, 0, newID)},
		{"recreated, stored within the new log", in(noCommit, stored(2, oldID), newID, 0, 7), reset(noCommit, startRecreated, 0, newID)},
		{"recreated, a stale Kafka commit", in(committed(2), stored(2, oldID), newID, 0, 7), reset(noCommit, startRecreated, 0, newID)},
		{"recreated, bounds unknown", partitionStart{kafka: committed(40), stored: stored(5000, oldID), hasStored: true, topicID: newID}, reset(noCommit, startRecreated, 0, newID)},
		// Without ids on either side, beyond the end may be a recreation:
		// reading from the start loses nothing.
		{"no stored id, beyond the end", in(noCommit, stored(5000, uuid.Nil), newID, 0, 3), reset(at(0), startRecreated, 0, newID)},
		{"no stored id, beyond the end of a log that starts later", in(committed(4000), stored(5000, uuid.Nil), newID, 12, 30), reset(at(12), startRecreated, 12, newID)},
		{"broker without ids, beyond the end", in(noCommit, stored(5000, oldID), uuid.Nil, 0, 3), reset(at(0), startRecreated, 0, uuid.Nil)},
		{"no stored id, within the log", in(noCommit, stored(55, uuid.Nil), newID, 0, 90), keep(at(55), startAtStored)},
		{"bounds unknown", partitionStart{kafka: committed(40), stored: stored(5000, oldID), hasStored: true, topicID: oldID}, keep(at(5000), startAtStored)},
	}
	for _, tt := range tests {
		if got := decideStart(tt.in); got != tt.want {
			t.Errorf("%s: decideStart = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestBackoffDelay(t *testing.T) {
	tests := []struct {
		attempt  int
		jitter   float64
		min, max time.Duration
	}{
		{0, 0, 50 * time.Millisecond, 50 * time.Millisecond},
		{0, 0.999, 50 * time.Millisecond, 100 * time.Millisecond},
		{1, 0.5, 150 * time.Millisecond, 150 * time.Millisecond},
		{5, 0, 1600 * time.Millisecond, 1600 * time.Millisecond},
		{6, 0.999, 2500 * time.Millisecond, retryMaxDelay},
		{40, 0.999, 2500 * time.Millisecond, retryMaxDelay},
		{1 << 30, 0, 2500 * time.Millisecond, 2500 * time.Millisecond},
	}
	for _, tt := range tests {
		got := retryBackoff.Delay(tt.attempt, tt.jitter)
		if got < tt.min || got > tt.max {
			t.Errorf("backoffDelay(%d, %v) = %v, want within [%v, %v]", tt.attempt, tt.jitter, got, tt.min, tt.max)
		}
	}
}

func TestDecideBatch(t *testing.T) {
	roster := map[string]event.TenantStatus{"t-on": event.TenantActive, "t-off": event.TenantInactive}
	lookup := func(id string) event.TenantStatus { return roster[id] }
	ok := cloudEvent(0, "t-on", eventID(1), []byte("{}"))
	ok.Offset = 7
	ok.Key = []byte("key")
	inactive := cloudEvent(0, "t-off", eventID(2), []byte("{}"))
	inactive.Offset = 8
	unknown := cloudEvent(0, "t-who", eventID(3), []byte("{}"))
	unknown.Offset = 9
	malformed := &kgo.Record{Offset: 12, Headers: []kgo.RecordHeader{{Key: "ce-specversion", Value: []byte("0.3")}}}
	tooBig := cloudEvent(0, "t-on", eventID(4), make([]byte, 11))
	tooBig.Offset = 13

	batch := decideBatch("g", partitionRecords{topic: testTopic, partition: 2, records: []*kgo.Record{ok, inactive, unknown, malformed, tooBig}},
		event.Options{MaxEventBytes: 10}, lookup)

	if batch.Group != "g" || batch.Topic != testTopic || batch.Partition != 2 || batch.NextOffset != 14 {
		t.Fatalf("batch %s %s/%d next %d, want g %s/2 next 14", batch.Group, batch.Topic, batch.Partition, batch.NextOffset, testTopic)
	}
	want := []struct {
		offset int64
		kind   event.Kind
		reason event.Reason
	}{
		{7, event.Accept, ""},
		{8, event.Discard, event.ReasonInactiveTenant},
		{9, event.Discard, event.ReasonUnknownTenant},
		{12, event.Quarantine, event.ReasonInvalidSpecVersion},
		{13, event.Quarantine, event.ReasonPayloadTooLarge},
	}
	for i, w := range want {
		r := batch.Records[i]
		if r.Offset != w.offset || r.Verdict.Kind != w.kind || r.Verdict.Reason != w.reason {
			t.Errorf("record %d: offset %d verdict %v, want %d %s %s", i, r.Offset, r.Verdict, w.offset, w.kind, w.reason)
		}
	}
	first := batch.Records[0]
	if first.Event.TenantID != "t-on" || first.Event.Key != "transaction.posted" || string(first.Key) != "key" {
		t.Errorf("accepted record: event %+v key %q", first.Event, first.Key)
	}
	if len(first.Headers) != len(ok.Headers) || first.Headers[1].Key != "ce-id" || len(batch.Records[3].Headers) != 1 {
		t.Errorf("headers not carried record by record: %v / %v", first.Headers, batch.Records[3].Headers)
	}
}

func TestSplitByPartition(t *testing.T) {
	rec := func(topic string, partition int32, offset int64) *kgo.Record {
		return &kgo.Record{Topic: topic, Partition: partition, Offset: offset}
	}
	fetches := kgo.Fetches{
		{Topics: []kgo.FetchTopic{
			{Topic: "a", Partitions: []kgo.FetchPartition{
				{Partition: 1, Records: []*kgo.Record{rec("a", 1, 4), rec("a", 1, 5)}},
				{Partition: 0, Records: nil},
			}},
			{Topic: "b", Partitions: []kgo.FetchPartition{{Partition: 1, Records: []*kgo.Record{rec("b", 1, 0)}}}},
		}},
		{Topics: []kgo.FetchTopic{
			{Topic: "a", Partitions: []kgo.FetchPartition{{Partition: 1, Records: []*kgo.Record{rec("a", 1, 6)}}}},
		}},
	}
	parts := splitByPartition(fetches)
	if len(parts) != 2 {
		t.Fatalf("%d partitions, want 2 (empty ones left out): %+v", len(parts), parts)
	}
	if parts[0].topic != "a" || parts[0].partition != 1 || len(parts[0].records) != 3 || parts[0].records[2].Offset != 6 {
		t.Errorf("first partition %s/%d with %d records, want a/1 with offsets 4, 5, 6", parts[0].topic, parts[0].partition, len(parts[0].records))
	}
	if parts[1].topic != "b" || len(parts[1].records) != 1 {
		t.Errorf("second partition %s/%d, want b/1", parts[1].topic, parts[1].partition)
	}
}

func TestDrainContextOutlivesItsParentByTheGrace(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	work, stop := drainContext(parent, 50*time.Millisecond)
	defer stop()
	cancelParent()
	if work.Err() != nil {
		t.Fatal("work ended with its parent")
	}
	select {
	case <-work.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("work did not end after the grace")
	}

	work, stop = drainContext(context.Background(), time.Hour)
	stop()
	if work.Err() == nil {
		t.Fatal("stop did not end work")
	}
}

func TestReportsFencing(t *testing.T) {
	for _, tt := range []struct {
		name    string
		keyvals []any
		want    bool
	}{
		{"fenced error", []any{"group", "g", "err", kerr.FencedInstanceID}, true},
		{"wrapped fenced error", []any{"err", fmt.Errorf("heartbeat: %w", kerr.FencedInstanceID)}, true},
		{"commit error code", []any{"topic", "t", "error_code", kerr.FencedInstanceID.Code}, true},
		{"other error", []any{"err", kerr.RebalanceInProgress}, false},
		{"other code", []any{"error_code", kerr.RebalanceInProgress.Code}, false},
		{"key without value", []any{"error_code"}, false},
		{"nothing", nil, false},
	} {
		if got := reportsFencing(tt.keyvals); got != tt.want {
			t.Errorf("%s: reportsFencing = %v, want %v", tt.name, got, tt.want)
		}
	}
}
