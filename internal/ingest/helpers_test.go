package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
	"github.com/hubctl/hubctl/internal/testutil/wait"
)

// TestMain stops the PostgreSQL server pgtest may start for this package.
func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	testTopic = "lerian.streaming.midaz_transaction.posted"
	testGroup = "streaming-hub"
	// testPartitions is what kafkatest creates per topic.
	testPartitions = 3
	waitTimeout    = 30 * time.Second
	// largeRecordBytes is what allowLargeRecords lets a topic take.
	largeRecordBytes = 4 << 20
)

// env is one test's database and Kafka cluster.
type env struct {
	t        testing.TB
	dsn      string
	store    *storetest.Store
	kafka    *kafkatest.Cluster
	producer *kgo.Client // places records on the partition they name
}

func newEnv(t testing.TB, topics ...string) *env {
	t.Helper()
	if len(topics) == 0 {
		topics = []string{testTopic}
	}
	dsn := pgtest.DSN(t)
	st, err := storetest.Connect(context.Background(), dsn, pg.Options{MaxConns: 8})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(st.Close)
	k := kafkatest.New(t, topics...)
	return &env{
		t:        t,
		dsn:      dsn,
		store:    st,
		kafka:    k,
		producer: k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(largeRecordBytes)),
	}
}

// kafkaConfig is the production default configuration on the test brokers.
func (e *env) kafkaConfig() config.KafkaConfig {
	return config.KafkaConfig{
		Brokers:         e.kafka.Brokers(),
		Group:           testGroup,
		Topics:          regexp.MustCompile(`^lerian\.streaming\..+`),
		TopicsExclude:   regexp.MustCompile(`\.(commands|dlq)$`),
		MetadataRefresh: time.Second,
	}
}

// member is one running consumer and its own metrics.
type member struct {
	*Consumer
	registry *prometheus.Registry
	stop     func() // cancels Run and waits for it
}

// start runs a consumer until the test ends or stop is called; configure
// may adjust its options.
func (e *env) start(configure ...func(*Options)) *member {
	e.t.Helper()
	c, reg := e.consumer(configure...)
	return e.run(c, reg)
}

// consumer builds a consumer with test settings and its own registry.
func (e *env) consumer(configure ...func(*Options)) (*Consumer, *prometheus.Registry) {
	e.t.Helper()
	reg := prometheus.NewRegistry()
	opts := Options{
		Kafka:           e.kafkaConfig(),
		Ingest:          config.IngestConfig{TypePrefix: "studio.lerian.", MaxEventBytes: 1 << 20, RosterRefresh: 100 * time.Millisecond},
		Queue:           e.store.Queue,
		Catalog:         e.store.Catalog,
		Logger:          testLogger(e.t),
		Registerer:      reg,
		DrainTimeout:    10 * time.Second,
		MaxBatchRecords: 1000,
	}
	for _, f := range configure {
		f(&opts)
	}
	c, err := New(opts)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	return c, reg
}

func (e *env) run(c *Consumer, reg *prometheus.Registry) *member {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	m := &member{Consumer: c, registry: reg}
	m.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					e.t.Errorf("Run: %v", err)
				}
			case <-time.After(waitTimeout):
				e.t.Errorf("Run did not return within %v of its context ending", waitTimeout)
			}
		})
	}
	e.t.Cleanup(m.stop)
	return m
}

// testLogger writes to the test log when -v is given, else nowhere: ingest
// logs every quarantined record, which would drown the conformance test.
func testLogger(t testing.TB) *slog.Logger {
	if !testing.Verbose() {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// produce writes records and waits for the broker's acknowledgement.
func (e *env) produce(records ...*kgo.Record) {
	e.t.Helper()
	if err := e.producer.ProduceSync(context.Background(), records...).FirstErr(); err != nil {
		e.t.Fatalf("produce: %v", err)
	}
}

// allowLargeRecords raises the topic's record size limit above the 1 MiB
// default, for records bigger than the hub's own limit.
func (e *env) allowLargeRecords(topic string) {
	e.t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeTopic
	res.ResourceName = topic
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name = "max.message.bytes"
	cfg.Op = kmsg.IncrementalAlterConfigOpSet
	value := fmt.Sprint(largeRecordBytes)
	cfg.Value = &value
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(context.Background(), e.producer)
	if err != nil {
		e.t.Fatalf("alter topic config: %v", err)
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			e.t.Fatalf("alter topic config of %s: %v", r.ResourceName, err)
		}
	}
}

// eventID is a canonical UUIDv7 that differs by n.
func eventID(n int) string { return fmt.Sprintf("0190b6a2-7c1e-7d3a-9f00-%012x", n) }

// cloudEvent is a well-formed record of tenant's transaction.posted event.
func cloudEvent(partition int32, tenant, id string, value []byte) *kgo.Record {
	return cloudEventOf(partition, tenant, id, "transaction", "posted", "1.0.0", "midaz", value)
}

func cloudEventOf(partition int32, tenant, id, resource, evType, schemaVersion, source string, value []byte) *kgo.Record {
	h := func(k, v string) kgo.RecordHeader { return kgo.RecordHeader{Key: k, Value: []byte(v)} }
	return &kgo.Record{
		Topic:     testTopic,
		Partition: partition,
		Value:     value,
		Headers: []kgo.RecordHeader{
			h("ce-specversion", "1.0"), h("ce-id", id), h("ce-source", source),
			h("ce-type", "studio.lerian."+resource+"."+evType), h("ce-time", "2026-11-29T12:00:00Z"),
			h("ce-schemaversion", schemaVersion), h("ce-resourcetype", resource), h("ce-eventtype", evType),
			h("ce-tenantid", tenant),
		},
	}
}

// addTenants puts tenants in the roster, active.
func (e *env) addTenants(ids ...string) {
	e.t.Helper()
	for _, id := range ids {
		e.exec(`INSERT INTO tenants (id) VALUES ($1)`, id)
	}
}

func (e *env) exec(sql string, args ...any) {
	e.t.Helper()
	if _, err := e.store.Pool.Exec(context.Background(), sql, args...); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
}

func (e *env) count(sql string, args ...any) int64 {
	e.t.Helper()
	var n int64
	if err := e.store.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// storedTotal is the sum of the group's stored next offsets on topic: the
// number of records stored when every partition started at 0.
func (e *env) storedTotal(topic string) int64 {
	e.t.Helper()
	return e.count(`SELECT coalesce(sum(next_offset), 0) FROM kafka_offsets WHERE consumer_group = $1 AND topic = $2`, testGroup, topic)
}

// waitStored waits until records up to a total of n are stored for topic.
func (e *env) waitStored(topic string, n int64) {
	e.t.Helper()
	waitFor(e.t, fmt.Sprintf("%d records of %s stored", n, topic), func() bool { return e.storedTotal(topic) >= n })
	if got := e.storedTotal(topic); got != n {
		e.t.Fatalf("stored offsets of %s add up to %d, want %d", topic, got, n)
	}
}

// waitFor waits up to waitTimeout for cond.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	wait.Poll{Patience: waitTimeout}.Until(t, what, cond)
}

// kafkaCommitted reads the group's committed offsets from the broker.
func (e *env) kafkaCommitted(topic string) map[int32]int64 {
	e.t.Helper()
	cl := e.kafka.Client(e.t)
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = testGroup
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic = topic
	for p := range int32(testPartitions) {
		rt.Partitions = append(rt.Partitions, p)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		e.t.Fatalf("fetch committed offsets: %v", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		e.t.Fatalf("fetch committed offsets: %v", err)
	}
	out := make(map[int32]int64)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.Offset >= 0 {
				out[p.Partition] = p.Offset
			}
		}
	}
	return out
}

// storedOffsets reads the group's stored next offsets of topic.
func (e *env) storedOffsets(topic string) map[int32]int64 {
	e.t.Helper()
	rows, err := e.store.Pool.Query(context.Background(),
		`SELECT kafka_partition, next_offset FROM kafka_offsets WHERE consumer_group = $1 AND topic = $2`, testGroup, topic)
	if err != nil {
		e.t.Fatal(err)
	}
	out := make(map[int32]int64)
	var p int32
	var next int64
	if _, err := pgx.ForEachRow(rows, []any{&p, &next}, func() error { out[p] = next; return nil }); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// metricValue sums the samples of a counter or gauge whose labels include
// the given ones; histograms count observations.
func metricValue(t testing.TB, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	want := make(map[string]string)
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			have := make(map[string]string)
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue metrics
				}
			}
			switch {
			case m.GetCounter() != nil:
				total += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				total += m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				total += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return total
}

func (m *member) metric(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	return metricValue(t, m.registry, name, labels...)
}

// settledMetric waits briefly for a counter to reach want and returns its
// value then (or at the deadline). Counters move just after a batch commits,
// so a test that saw the commit in the database must not race them.
func (m *member) settledMetric(t testing.TB, want float64, name string, labels ...string) float64 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := m.metric(t, name, labels...)
		if got == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}
