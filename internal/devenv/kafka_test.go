package devenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func startTestKafka(t *testing.T, opts KafkaOptions) *Kafka {
	t.Helper()
	k, err := StartKafka(opts)
	if err != nil {
		t.Fatalf("StartKafka: %v", err)
	}
	t.Cleanup(k.Close)
	return k
}

func newTestClient(t *testing.T, k *Kafka, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(k.Brokers()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func TestKafkaRecordsKeepHeaders(t *testing.T) {
	t.Parallel()
	k := startTestKafka(t, KafkaOptions{Topics: []string{"events"}})
	for _, b := range k.Brokers() {
		if host, _, err := net.SplitHostPort(b); err != nil || host != "127.0.0.1" {
			t.Errorf("broker %q does not listen on 127.0.0.1 only", b)
		}
	}
	if got := len(k.cluster.PartitionInfos("events")); got != defaultPartitions {
		t.Errorf("topic events has %d partitions, want the default %d", got, defaultPartitions)
	}

	sent := []*kgo.Record{
		{Topic: "events", Key: []byte("k1"), Value: []byte(`{"a":1}`), Headers: []kgo.RecordHeader{
			{Key: "ce_type", Value: []byte("transaction.posted")},
			{Key: "binary", Value: []byte{0x00, 0xff, 0xfe, 0x80, '\n'}},
			{Key: "empty", Value: []byte{}},
			{Key: "ce_type", Value: []byte("repeated keys keep their order")},
		}},
		{Topic: "events", Key: []byte("k1"), Value: []byte("second"), Headers: []kgo.RecordHeader{
			{Key: "n", Value: []byte("2")},
		}},
	}
	producer := newTestClient(t, k)
	if err := producer.ProduceSync(t.Context(), sent...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}

	consumer := newTestClient(t, k, kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := pollN(t, consumer, len(sent))
	// Same key, same partition: order is kept.
	for i, want := range sent {
		if !bytes.Equal(got[i].Value, want.Value) || !bytes.Equal(got[i].Key, want.Key) {
			t.Errorf("record %d = key %q value %q, want key %q value %q", i, got[i].Key, got[i].Value, want.Key, want.Value)
		}
		if g, w := formatHeaders(got[i].Headers), formatHeaders(want.Headers); g != w {
			t.Errorf("record %d headers = %s, want %s", i, g, w)
		}
	}
}

// TestKafkaConsumerGroupResumesFromCommit commits offsets as one group
// member and checks that the next member starts after them.
func TestKafkaConsumerGroupResumesFromCommit(t *testing.T) {
	t.Parallel()
	k := startTestKafka(t, KafkaOptions{Topics: []string{"events"}, Partitions: 2})
	producer := newTestClient(t, k, kgo.DefaultProduceTopic("events"))
	produceValues(t, producer, "a", "b", "c")

	groupOpts := []kgo.Opt{
		kgo.ConsumerGroup("hub"),
		kgo.ConsumeTopics("events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
	}
	first, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(k.Brokers()...)}, groupOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	records := pollN(t, first, 3)
	if err := first.CommitRecords(t.Context(), records...); err != nil {
		t.Fatalf("commit: %v", err)
	}
	first.Close() // leaves the group

	produceValues(t, producer, "d", "e")
	second := newTestClient(t, k, groupOpts...)
	var values []string
	for _, r := range pollN(t, second, 2) {
		values = append(values, string(r.Value))
	}
	slices.Sort(values) // two partitions: no order across them
	if got := strings.Join(values, ","); got != "d,e" {
		t.Errorf("after the commit the group read %q, want only the new records d,e", got)
	}
}

func TestKafkaFixedPortAndDataDir(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	var (
		k    *Kafka
		opts KafkaOptions
		port int
	)
	// Another process (a test of another package) may bind the port
	// between its pick and our bind; only then is another one drawn.
	for try := 0; k == nil; try++ {
		port = freeTestPort(t)
		opts = KafkaOptions{Port: port, Topics: []string{"events"}, DataDir: dataDir}
		var err error
		k, err = StartKafka(opts)
		if inUse := (*PortInUseError)(nil); errors.As(err, &inUse) && try < 3 {
			t.Logf("port %d taken before the broker bound it: %v", port, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if got, want := k.Brokers(), "127.0.0.1:"+strconv.Itoa(port); len(got) != 1 || got[0] != want {
		t.Errorf("Brokers() = %q, want [%q]", got, want)
	}
	producer, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers()...), kgo.DefaultProduceTopic("events"))
	if err != nil {
		t.Fatal(err)
	}
	produceValues(t, producer, "kept")
	producer.Close()
	k.Close()
	k.Close() // idempotent

	// A topic added to the options appears in the restored cluster.
	opts.Topics = append(opts.Topics, "added")
	restarted := startTestKafka(t, opts)
	if got := len(restarted.cluster.PartitionInfos("added")); got != defaultPartitions {
		t.Errorf("topic added after a restart has %d partitions, want %d", got, defaultPartitions)
	}
	consumer := newTestClient(t, restarted, kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if got := pollN(t, consumer, 1); string(got[0].Value) != "kept" {
		t.Errorf("record after restart = %q, want kept", got[0].Value)
	}
}

func produceValues(t *testing.T, cl *kgo.Client, values ...string) {
	t.Helper()
	var records []*kgo.Record
	for _, v := range values {
		records = append(records, kgo.StringRecord(v))
	}
	if err := cl.ProduceSync(t.Context(), records...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// pollN polls until n records have arrived, failing after 15s.
func pollN(t *testing.T, cl *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	var got []*kgo.Record
	for len(got) < n {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("got %d of %d records before the timeout", len(got), n)
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			t.Fatalf("poll: %v", errs[0].Err)
		}
		got = append(got, fetches.Records()...)
	}
	if len(got) > n {
		t.Fatalf("got %d records, want %d", len(got), n)
	}
	return got
}

func formatHeaders(hs []kgo.RecordHeader) string {
	parts := make([]string, 0, len(hs))
	for _, h := range hs {
		parts = append(parts, fmt.Sprintf("%q=%x", h.Key, h.Value))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func freeTestPort(t *testing.T) int {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
