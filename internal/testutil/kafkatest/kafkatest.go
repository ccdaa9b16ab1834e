// Package kafkatest gives a test an in-process Kafka cluster (franz-go's
// kfake, through devenv.StartKafka) and the few helpers tests need around
// it. Everything is closed when the test ends.
package kafkatest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/devenv"
)

// Cluster is a single-broker Kafka for one test.
type Cluster struct {
	kafka *devenv.Kafka

	producerOnce sync.Once
	producer     *kgo.Client
	producerErr  error
}

// New starts a cluster with the given topics (three partitions each) and
// closes it at the end of the test.
func New(t testing.TB, topics ...string) *Cluster {
	t.Helper()
	k, err := devenv.StartKafka(devenv.KafkaOptions{Topics: topics})
	if err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	c := &Cluster{kafka: k}
	t.Cleanup(c.close)
	return c
}

// Brokers are the seed addresses for clients.
func (c *Cluster) Brokers() []string { return c.kafka.Brokers() }

// Client returns a client seeded with the cluster's brokers and configured
// by opts, closed at the end of the test.
func (c *Cluster) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Brokers()...)}, opts...)...)
	if err != nil {
		t.Fatalf("kafkatest: new client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Produce writes records to topic and returns once all are acknowledged,
// failing the test otherwise. Records with an empty Topic get topic; a
// record naming another topic is a mistake in the test.
func (c *Cluster) Produce(t testing.TB, ctx context.Context, topic string, records ...*kgo.Record) {
	t.Helper()
	for i, r := range records {
		switch r.Topic {
		case "":
			r.Topic = topic
		case topic:
		default:
			t.Fatalf("kafkatest: Produce to %q got record %d for topic %q", topic, i, r.Topic)
		}
	}
	producer, err := c.sharedProducer()
	if err != nil {
		t.Fatalf("kafkatest: new producer: %v", err)
	}
	if err := producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatalf("kafkatest: produce to %q: %v", topic, err)
	}
}

// Consume reads n records of topic, from the start of its partitions and
// without a consumer group, failing the test if they do not arrive within
// 10s or ctx ends first. Records of one partition keep their order; there is
// no order across partitions.
func (c *Cluster) Consume(t testing.TB, ctx context.Context, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(c.Brokers()...),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	if err != nil {
		t.Fatalf("kafkatest: new consumer: %v", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, consumeTimeout)
	defer cancel()
	var got []*kgo.Record
	for len(got) < n {
		fetches := cl.PollRecords(ctx, n-len(got))
		if ctx.Err() != nil {
			t.Fatalf("kafkatest: read %d of %d records from %q before giving up: %v", len(got), n, topic, ctx.Err())
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			t.Fatalf("kafkatest: consume %q: %v", topic, errs[0].Err)
		}
		got = append(got, fetches.Records()...)
	}
	return got
}

const consumeTimeout = 10 * time.Second

var errClosed = errors.New("cluster closed at the end of the test")

// sharedProducer is created on first use: many tests only consume.
func (c *Cluster) sharedProducer() (*kgo.Client, error) {
	c.producerOnce.Do(func() {
		c.producer, c.producerErr = kgo.NewClient(kgo.SeedBrokers(c.Brokers()...))
	})
	return c.producer, c.producerErr
}

func (c *Cluster) close() {
	// Taking the once keeps a late Produce from opening a client after
	// this point.
	c.producerOnce.Do(func() { c.producerErr = errClosed })
	if c.producer != nil {
		c.producer.Close()
	}
	c.kafka.Close()
}
