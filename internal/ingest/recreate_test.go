package ingest

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hubctl/hubctl/internal/devenv"
)

// recreateTopic deletes topic and creates it again with partitions, as an
// operator's admin tool does: Kafka gives it a new id and starts its
// offsets at 0.
func (e *env) recreateTopic(topic string, partitions int32) {
	e.t.Helper()
	admin := e.kafka.Client(e.t)
	del := kmsg.NewPtrDeleteTopicsRequest()
	dt := kmsg.NewDeleteTopicsRequestTopic()
	dt.Topic = kmsg.StringPtr(topic)
	del.Topics = append(del.Topics, dt)
	del.TopicNames = []string{topic}
	resp, err := del.RequestWith(context.Background(), admin)
	if err != nil {
		e.t.Fatalf("delete topic: %v", err)
	}
	for _, r := range resp.Topics {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			e.t.Fatalf("delete topic: %v", err)
		}
	}
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic = topic
	ct.NumPartitions = partitions
	ct.ReplicationFactor = -1
	create.Topics = append(create.Topics, ct)
	cresp, err := create.RequestWith(context.Background(), admin)
	if err != nil {
		e.t.Fatalf("create topic: %v", err)
	}
	for _, r := range cresp.Topics {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			e.t.Fatalf("create topic: %v", err)
		}
	}
}

// logCapture keeps the messages logged at warning level and above, with
// their partition attribute, and passes every line on to the test log.
type logCapture struct {
	mu    sync.Mutex
	lines []capturedLine
	next  slog.Handler
}

type capturedLine struct {
	msg       string
	partition int64 // -1 when the line names none
}

func newLogCapture(t testing.TB) *logCapture {
	return &logCapture{next: testLogger(t).Handler()}
}

func (l *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCapture) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &attrCapture{capture: l, attrs: attrs}
}
func (l *logCapture) WithGroup(string) slog.Handler { return l }
func (l *logCapture) Handle(ctx context.Context, r slog.Record) error {
	return l.handle(ctx, r, nil)
}

func (l *logCapture) handle(ctx context.Context, r slog.Record, attrs []slog.Attr) error {
	line := capturedLine{msg: r.Message, partition: -1}
	collect := func(a slog.Attr) bool {
		if a.Key == "partition" {
			line.partition = a.Value.Int64()
		}
		return true
	}
	for _, a := range attrs {
		collect(a)
	}
	r.Attrs(collect)
	if r.Level >= slog.LevelWarn {
		l.mu.Lock()
		l.lines = append(l.lines, line)
		l.mu.Unlock()
	}
	if l.next.Enabled(ctx, r.Level) {
		r.AddAttrs(attrs...)
		return l.next.Handle(ctx, r)
	}
	return nil
}

// perPartition counts the captured lines containing text, by partition.
func (l *logCapture) perPartition(text string) map[int64]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[int64]int)
	for _, line := range l.lines {
		if strings.Contains(line.msg, text) {
			out[line.partition]++
		}
	}
	return out
}

func (l *logCapture) count(text string) int {
	n := 0
	for _, c := range l.perPartition(text) {
		n += c
	}
	return n
}

type attrCapture struct {
	capture *logCapture
	attrs   []slog.Attr
}

func (a *attrCapture) Enabled(context.Context, slog.Level) bool { return true }
func (a *attrCapture) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &attrCapture{capture: a.capture, attrs: append(append([]slog.Attr(nil), a.attrs...), attrs...)}
}
func (a *attrCapture) WithGroup(string) slog.Handler { return a }
func (a *attrCapture) Handle(ctx context.Context, r slog.Record) error {
	return a.capture.handle(ctx, r, a.attrs)
}

const recreatedLog = "deleted and created again"

// produceToNewTopic writes one event per (partition, id) from a client that
// never knew the topic's earlier incarnation, like the producers an
// operator points at a recreated topic.
func (e *env) produceToNewTopic(partitions int32, perPartition int, firstID int) int {
	e.t.Helper()
	producer := e.kafka.Client(e.t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	n := 0
	for p := range partitions {
		for range perPartition {
			rec := cloudEvent(p, "t-a", eventID(firstID+n), []byte("{}"))
			if err := producer.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
				e.t.Fatalf("produce to the recreated topic: %v", err)
			}
			n++
		}
	}
	return n
}

// produceOld writes perPartition events to every partition of the topic's
// first incarnation, enough that its stored offsets lie beyond the first
// offsets of the next one.
func (e *env) produceOld(perPartition int) int {
	e.t.Helper()
	n := 0
	for p := range int32(testPartitions) {
		for range perPartition {
			e.produce(cloudEvent(p, "t-a", eventID(n), []byte("{}")))
			n++
		}
	}
	return n
}

// assertRecreationFollowed checks that every event of both incarnations is
// in the inbox once, none was judged a duplicate, the new incarnation's
// stored positions are its own, and each partition that had a stored
// position said so once.
// m accepted accepted of them.
func assertRecreationFollowed(t *testing.T, e *env, m *member, logs *logCapture, events, accepted int64, partitions int32, perPartition int64) {
	t.Helper()
	waitFor(t, "every event produced after the recreation", func() bool { return e.count(`SELECT count(*) FROM events`) >= events })
	if n := e.count(`SELECT count(*) FROM events`); n != events {
		t.Errorf("inbox holds %d events, want %d", n, events)
	}
	if got := m.settledMetric(t, float64(accepted), "streaming_hub_ingest_records_total", "verdict", "accept"); got != float64(accepted) {
		t.Errorf("%v records accepted, want %d", got, accepted)
	}
	if got := m.metric(t, "streaming_hub_ingest_records_total", "reason", "duplicate"); got != 0 {
		t.Errorf("%v records judged duplicates", got)
	}
	waitFor(t, "the new topic's stored positions", func() bool {
		return e.count(`SELECT count(*) FROM kafka_offsets WHERE topic = $1 AND kafka_partition < $2 AND next_offset = $3`,
			testTopic, partitions, perPartition) == int64(partitions)
	})
	if ids := e.count(`SELECT count(DISTINCT topic_id) FROM kafka_offsets WHERE topic = $1 AND kafka_partition < $2`, testTopic, partitions); ids != 1 {
		t.Errorf("the new topic's partitions are stored under %d topic ids, want 1", ids)
	}
	said := logs.perPartition(recreatedLog)
	for p := range min(partitions, testPartitions) {
		if said[int64(p)] != 1 {
			t.Errorf("partition %d: %d log lines about the recreation, want 1 (all: %v)", p, said[int64(p)], said)
		}
	}
	if n := logs.count("Kafka fetch failed"); n != 0 {
		t.Errorf("%d fetch failures logged", n)
	}
}

// TestTopicRecreatedWhileRunning: a topic deleted and created again under
// a running consumer, with fewer or more partitions, is followed: every
// event produced to it afterwards is ingested once.
func TestTopicRecreatedWhileRunning(t *testing.T) {
	for _, tc := range []struct {
		name       string
		partitions int32
	}{{"fewer partitions", 1}, {"more partitions", 5}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.addTenants("t-a")
			logs := newLogCapture(t)
			m := e.start(func(o *Options) { o.Logger = slog.New(logs) })
			old := e.produceOld(5)
			e.waitStored(testTopic, int64(old))

			e.recreateTopic(testTopic, tc.partitions)
			added := e.produceToNewTopic(tc.partitions, 2, 1000)
			assertRecreationFollowed(t, e, m, logs, int64(old+added), int64(old+added), tc.partitions, 2)
			if got := m.metric(t, "streaming_hub_ingest_partitions_repositioned_total", "reason", "recreated"); got != float64(min(tc.partitions, testPartitions)) {
				t.Errorf("%v partitions repositioned for the recreation, want %d", got, min(tc.partitions, testPartitions))
			}
		})
	}
}

// TestTopicRecreatedWhileStopped: the consumer restarted after the topic
// was recreated reads the new topic from its start, although the stored
// offsets of the old one lie beyond (fewer) or within (more) its records.
func TestTopicRecreatedWhileStopped(t *testing.T) {
	for _, tc := range []struct {
		name         string
		partitions   int32
		perPartition int
	}{{"fewer partitions, stored offsets beyond the new log", 1, 2}, {"more partitions, stored offsets within the new log", 5, 8}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.addTenants("t-a")
			first := e.start()
			old := e.produceOld(5)
			e.waitStored(testTopic, int64(old))
			first.stop()

			e.recreateTopic(testTopic, tc.partitions)
			added := e.produceToNewTopic(tc.partitions, tc.perPartition, 1000)
			logs := newLogCapture(t)
			m := e.start(func(o *Options) { o.Logger = slog.New(logs) })
			assertRecreationFollowed(t, e, m, logs, int64(old+added), int64(added), tc.partitions, int64(tc.perPartition))
		})
	}
}

// TestEmbeddedBrokerLostTail: `hubctl dev`'s broker restarted from a data
// directory that lacks the tail of a partition the hub had stored (what
// an unclean stop leaves when the tail was never flushed). The hub resumes
// at the log end, where new records are written, rather than skipping
// them as stored or reading the partition again from its start.
func TestEmbeddedBrokerLostTail(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a")
	dataDir := t.TempDir()
	broker, err := devenv.StartKafka(devenv.KafkaOptions{Topics: []string{testTopic}, Partitions: 1, DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	useBroker := func(k *devenv.Kafka) func(*Options) {
		return func(o *Options) { o.Kafka.Brokers = k.Brokers() }
	}
	produce := func(k *devenv.Kafka, first, n int) {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for i := range n {
			if err := cl.ProduceSync(context.Background(), cloudEvent(0, "t-a", eventID(first+i), []byte("{}"))).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
		}
	}

	produce(broker, 0, 3)
	// What is on disk now is what an unclean stop that loses the
	// records written after this point leaves.
	flushed := t.TempDir()
	if err := os.CopyFS(flushed, os.DirFS(dataDir)); err != nil {
		t.Fatal(err)
	}
	produce(broker, 3, 3)
	hub := e.start(useBroker(broker))
	waitFor(t, "the six records stored", func() bool { return e.storedOffsets(testTopic)[0] == 6 })
	hub.stop()
	broker.Close()

	restarted, err := devenv.StartKafka(devenv.KafkaOptions{Topics: []string{testTopic}, Partitions: 1, DataDir: flushed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(restarted.Close)
	logs := newLogCapture(t)
	hub = e.start(useBroker(restarted), func(o *Options) { o.Logger = slog.New(logs) })
	waitFor(t, "the stored position to follow the log back", func() bool {
		return hub.metric(t, "streaming_hub_ingest_partitions_repositioned_total", "reason", "truncated") == 1
	})
	if got := e.storedOffsets(testTopic)[0]; got != 3 {
		t.Fatalf("stored offset %d after the broker lost records 3-5, want the log end 3", got)
	}
	// Brand-new events land at the lost records' offsets.
	produce(restarted, 100, 4)
	waitFor(t, "the new events", func() bool { return e.count(`SELECT count(*) FROM events`) == 10 })
	waitFor(t, "the stored offset past them", func() bool { return e.storedOffsets(testTopic)[0] == 7 })
	if got := hub.settledMetric(t, 4, "streaming_hub_ingest_records_total", "verdict", "accept"); got != 4 {
		t.Errorf("%v records accepted after the restart, want the 4 new ones", got)
	}
	if got := hub.metric(t, "streaming_hub_ingest_records_total", "reason", "duplicate"); got != 0 {
		t.Errorf("%v records judged duplicates: the partition was read again from its start", got)
	}
	if n := logs.count("lost records"); n != 1 {
		t.Errorf("%d log lines about the lost records, want 1", n)
	}
	var id uuid.NullUUID
	if err := e.store.Pool.QueryRow(context.Background(), `SELECT topic_id FROM kafka_offsets WHERE topic = $1`, testTopic).Scan(&id); err != nil || !id.Valid {
		t.Errorf("stored topic id %v, %v; want the topic's", id, err)
	}
}
