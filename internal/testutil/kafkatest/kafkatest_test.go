package kafkatest_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
)

func TestProduceThenConsume(t *testing.T) {
	t.Parallel()
	c := kafkatest.New(t, "lerian.streaming.ledger")
	header := []byte{0x00, 0xc3, 0x28, 0xff} // not UTF-8
	c.Produce(t, t.Context(), "lerian.streaming.ledger",
		&kgo.Record{Key: []byte("acct-1"), Value: []byte("one"), Headers: []kgo.RecordHeader{{Key: "raw", Value: header}}},
		&kgo.Record{Key: []byte("acct-1"), Value: []byte("two")},
	)
	got := c.Consume(t, t.Context(), "lerian.streaming.ledger", 2)
	if len(got) != 2 || string(got[0].Value) != "one" || string(got[1].Value) != "two" {
		t.Fatalf("consumed %v, want one then two (same key, same partition)", values(got))
	}
	if h := got[0].Headers; len(h) != 1 || h[0].Key != "raw" || !bytes.Equal(h[0].Value, header) {
		t.Errorf("headers = %v, want raw=%x", h, header)
	}
}

func TestClientJoinsGroup(t *testing.T) {
	t.Parallel()
	c := kafkatest.New(t, "events")
	c.Produce(t, t.Context(), "events", kgo.StringRecord("a"), kgo.StringRecord("b"))
	cl := c.Client(t,
		kgo.ConsumerGroup("hub"),
		kgo.ConsumeTopics("events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	var got []string
	for len(got) < 2 {
		fetches := cl.PollFetches(t.Context())
		if errs := fetches.Errors(); len(errs) > 0 {
			t.Fatal(errs[0].Err)
		}
		got = append(got, values(fetches.Records())...)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("group member read %q, want a and b", got)
	}
}

func TestBrokersAreLoopback(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.New(t).Brokers()
	if len(brokers) != 1 {
		t.Fatalf("Brokers() = %q, want one broker", brokers)
	}
	if !strings.HasPrefix(brokers[0], "127.0.0.1:") {
		t.Errorf("broker %q does not listen on 127.0.0.1", brokers[0])
	}
}

func values(records []*kgo.Record) []string {
	out := make([]string, 0, len(records))
	for _, r := range records {
		out = append(out, string(r.Value))
	}
	return out
}
