package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hubctl/hubctl/internal/clip"
	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
)

// maxErrorBytes keeps recorded errors short.
const maxErrorBytes = 200

// topicSink is one subscription's topic on a shared cluster client.
type topicSink struct {
	typ       *Type
	cluster   *cluster
	topic     string
	key       string // "" is KeyTenant
	closeOnce sync.Once
}

// produceResult is what a successful produce records as the response.
type produceResult struct {
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
}

// Deliver produces d once and succeeds only when the brokers acknowledge
// it (acks=all).
func (s *topicSink) Deliver(ctx context.Context, d sink.Delivery) sink.Outcome {
	timeout := sink.AttemptTimeout(d.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client, err := s.cluster.producer()
	if err != nil {
		return sink.Outcome{Error: s.describeError(ctx, err, timeout)}
	}
	record := Record(s.topic, s.key, d)
	err = s.await(ctx, func(ctx context.Context) error { return client.ProduceSync(ctx, record).FirstErr() })
	if err != nil {
		return sink.Outcome{Error: s.describeError(ctx, err, timeout), NotSent: errors.Is(err, kerr.MessageTooLarge)}
	}
	response, _ := json.Marshal(produceResult{Partition: record.Partition, Offset: record.Offset})
	return sink.Outcome{OK: true, Response: response}
}

// await runs one request of an attempt and waits for its answer, the
// attempt's deadline, or a broker connection or login failing meanwhile,
// whichever comes first. A request given up on is cancelled, so a record
// never outlives its attempt.
func (s *topicSink) await(ctx context.Context, request func(ctx context.Context) error) error {
	failed, failure := s.cluster.connectFailures()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- request(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-failed:
		select {
		case err = <-done: // an answer that came with the failure still counts
		default:
			return failure()
		}
	}
	if err != nil {
		// A refused login reaches the request as the connection closing;
		// the failure the hook saw says why.
		select {
		case <-failed:
			return failure()
		default:
		}
	}
	return err
}

// Probe asks the cluster for the topic's metadata with the subscription's
// credentials: the connection authenticates, and the answer shows the
// topic exists and may be used. It produces nothing.
func (s *topicSink) Probe(ctx context.Context, p sink.ProbeRequest) error {
	timeout := sink.AttemptTimeout(p.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client, err := s.cluster.producer()
	if err != nil {
		return errors.New(s.describeError(ctx, err, timeout))
	}
	req := kmsg.NewPtrMetadataRequest()
	topic := kmsg.NewMetadataRequestTopic()
	topic.Topic = kmsg.StringPtr(s.topic)
	req.Topics = append(req.Topics, topic)
	var resp *kmsg.MetadataResponse
	err = s.await(ctx, func(ctx context.Context) (err error) {
		resp, err = req.RequestWith(ctx, client)
		return err
	})
	if err != nil {
		return errors.New(s.describeError(ctx, err, timeout))
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != s.topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return errors.New(s.describeError(ctx, err, timeout))
		}
		if len(t.Partitions) == 0 {
			return fmt.Errorf("topic %q has no partitions", s.topic)
		}
		return nil
	}
	return fmt.Errorf("the cluster's metadata does not list topic %q", s.topic)
}

// Close releases this sink's share of the cluster client; the last sink
// of a cluster and login closes it. Closing twice is harmless.
func (s *topicSink) Close() error {
	s.closeOnce.Do(func() { s.typ.release(s.cluster) })
	return nil
}

// Record is the Kafka record of one delivery on topic (docs/concepts.md,
// Sinks), keyed by keyBy ("" or KeyTenant, KeySubject, KeyEventID,
// KeyNone): the value is the event data byte for byte, the CloudEvents
// attributes are ce_* headers and the data content type content-type
// (binary mode of the CloudEvents Kafka protocol binding), and
// sink.Attributes are headers of their own. An empty key (no subject)
// leaves the partition to the partitioner.
func Record(topic, keyBy string, d sink.Delivery) *kgo.Record {
	var headers []kgo.RecordHeader
	add := func(name, value string) {
		headers = append(headers, kgo.RecordHeader{Key: name, Value: []byte(value)})
	}
	for _, attr := range sink.CloudEventsAttributes(d) {
		add("ce_"+attr.Name, attr.Value)
	}
	add("content-type", d.ContentType())
	for _, attr := range sink.Attributes(d) {
		add(attr.Name, attr.Value)
	}
	var key []byte
	switch keyBy {
	case "", KeyTenant:
		key = []byte(d.TenantID)
	case KeySubject:
		key = []byte(d.Subject)
	case KeyEventID:
		key = []byte(d.EventID)
	}
	if len(key) == 0 {
		key = nil
	}
	return &kgo.Record{Topic: topic, Key: key, Value: d.Payload, Headers: headers}
}

// describeError turns a failed attempt into a short reason free of the
// password.
func (s *topicSink) describeError(attemptCtx context.Context, err error, timeout time.Duration) string {
	text := s.reason(attemptCtx, err, timeout)
	if p := s.cluster.settings.password; p != "" {
		text = strings.ReplaceAll(text, p, sink.Masked)
	}
	// Scrubbed before it is cut, so no part of the password survives the cut.
	return clip.String(text, maxErrorBytes)
}

func (s *topicSink) reason(attemptCtx context.Context, err error, timeout time.Duration) string {
	if refused, ok := errors.AsType[*netguard.RefusedError](err); ok {
		return "destination refused: " + refused.Error()
	}
	switch {
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		return fmt.Sprintf("topic %q does not exist (%s)", s.topic, kerr.UnknownTopicOrPartition.Message)
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return fmt.Sprintf("the credentials may not write to topic %q (%s)", s.topic, kerr.TopicAuthorizationFailed.Message)
	case errors.Is(err, errSASLRefused):
		return err.Error()
	case errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.IllegalSaslState), errors.Is(err, kerr.UnsupportedSaslMechanism):
		return "the brokers refused the credentials (" + err.Error() + ")"
	}
	if kafkaErr, ok := errors.AsType[*kerr.Error](err); ok {
		return "Kafka error " + kafkaErr.Message + " (" + strconv.Itoa(int(kafkaErr.Code)) + "): " + kafkaErr.Description
	}
	if text, ok := sink.DescribeUnanswered(attemptCtx, err, "acknowledgement", timeout); ok {
		return text
	}
	return err.Error()
}
