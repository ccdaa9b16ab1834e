package pubsub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	iampb "cloud.google.com/go/iam/apiv1/iampb"
	gpubsub "cloud.google.com/go/pubsub/v2"
	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/hubctl/hubctl/internal/clip"
	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
)

const (
	// maxErrorBytes keeps recorded errors short.
	maxErrorBytes = 200
	// publishPermission is what the probe asks the topic's IAM policy for.
	publishPermission = "pubsub.topics.publish"
)

var errClosed = errors.New("sink closed")

// dialPrefix is how gRPC introduces a dial error in a status message.
const dialPrefix = "Error while dialing: "

// topicSink is one subscription's topic on a shared client.
type topicSink struct {
	typ    *Type
	client *client
	topic  string // full resource name
	// scrub masks the key wherever an error text could quote it.
	scrub func(string) string

	mu  sync.Mutex
	pub *gpubsub.Publisher

	closeOnce sync.Once
}

func newTopicSink(t *Type, c *client, pub publicConfig) *topicSink {
	return &topicSink{typ: t, client: c, topic: topicName(pub), scrub: scrubber(c.serviceAccountKey)}
}

// publishResult is what a successful publish records as the response.
type publishResult struct {
	MessageID string `json:"message_id"`
}

// Deliver publishes d once and succeeds when Pub/Sub returns its message
// id.
func (s *topicSink) Deliver(ctx context.Context, d sink.Delivery) sink.Outcome {
	timeout := sink.AttemptTimeout(d.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	msg, err := Message(d)
	if err != nil {
		return sink.Outcome{Error: err.Error(), NotSent: true}
	}
	p, err := s.publisher(ctx)
	if err != nil {
		return sink.Outcome{Error: s.describeError(ctx, err, timeout)}
	}
	id, err := p.Publish(ctx, msg).Get(ctx)
	if err != nil {
		if d.OrderingKey != "" {
			// The library pauses a key after a failed publish so that
			// later messages cannot overtake it; dispatch already holds
			// the key's next job until this one succeeds, and its retry
			// must be published.
			p.ResumePublish(d.OrderingKey)
		}
		return sink.Outcome{Error: s.describeError(ctx, err, timeout)}
	}
	response, _ := json.Marshal(publishResult{MessageID: id})
	return sink.Outcome{OK: true, Response: response}
}

// Pub/Sub's limits on a message (cloud.google.com/pubsub/quotas).
const (
	MaxMessageBytes     = 10 << 20
	maxAttributeBytes   = 1024
	maxOrderingKeyBytes = 1024
)

// Message is the Pub/Sub message of one delivery (docs/concepts.md,
// Sinks), or why Pub/Sub could not take it; the reason is final for this
// event, so it names the limit that was hit. The data is the event data
// byte for byte; the CloudEvents attributes are ce-* attributes and the
// data content type content-type (binary mode of the CloudEvents Pub/Sub
// binding); sink.Attributes are attributes of their own; the ordering key
// is the job's, when its subscription orders (an ordered job's key may be
// "", an event without a subject: Pub/Sub then orders nothing for it).
func Message(d sink.Delivery) (*gpubsub.Message, error) {
	attrs := map[string]string{"content-type": d.ContentType()}
	for _, attr := range sink.CloudEventsAttributes(d) {
		attrs["ce-"+attr.Name] = attr.Value
	}
	for _, attr := range sink.Attributes(d) {
		attrs[attr.Name] = attr.Value
	}
	size := len(d.Payload) + len(d.OrderingKey)
	for name, value := range attrs {
		switch {
		case len(value) > maxAttributeBytes:
			return nil, fmt.Errorf("attribute %s is %d bytes, longer than the %d bytes Pub/Sub allows", name, len(value), maxAttributeBytes)
		case !utf8.ValidString(value):
			return nil, fmt.Errorf("attribute %s is not valid UTF-8, which Pub/Sub requires", name)
		}
		size += len(name) + len(value)
	}
	switch {
	case len(d.OrderingKey) > maxOrderingKeyBytes:
		return nil, fmt.Errorf("ordering key is %d bytes, longer than the %d bytes Pub/Sub allows", len(d.OrderingKey), maxOrderingKeyBytes)
	case !utf8.ValidString(d.OrderingKey):
		return nil, errors.New("ordering key is not valid UTF-8, which Pub/Sub requires")
	case size > MaxMessageBytes:
		return nil, fmt.Errorf("message too large for Pub/Sub: %d bytes (event data plus attributes), the limit is %d bytes (10 MiB)", size, MaxMessageBytes)
	}
	return &gpubsub.Message{Data: d.Payload, Attributes: attrs, OrderingKey: d.OrderingKey}, nil
}

// Probe proves the topic exists and the key may publish to it, and
// publishes nothing: it asks the topic's IAM policy whether the caller
// holds pubsub.topics.publish (the question needs no permission of its
// own, and a missing topic is NotFound). A server without the IAM service
// (the emulator, which checks no permissions) is asked for the topic
// instead.
func (s *topicSink) Probe(ctx context.Context, p sink.ProbeRequest) error {
	timeout := sink.AttemptTimeout(p.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := s.client.get(ctx)
	if err != nil {
		return errors.New(s.describeError(ctx, err, timeout))
	}
	granted, err := c.TopicAdminClient.TestIamPermissions(ctx, &iampb.TestIamPermissionsRequest{Resource: s.topic, Permissions: []string{publishPermission}})
	if status.Code(err) == codes.Unimplemented {
		_, err = c.TopicAdminClient.GetTopic(ctx, &pb.GetTopicRequest{Topic: s.topic})
		if err == nil {
			return nil
		}
	}
	if err != nil {
		return errors.New(s.describeError(ctx, err, timeout))
	}
	if !slices.Contains(granted.GetPermissions(), publishPermission) {
		return fmt.Errorf("the credentials may not publish to topic %s (they lack %s)", s.topic, publishPermission)
	}
	return nil
}

func (s *topicSink) endpoint() string { return endpointOrDefault(s.client.key.endpoint) }

// publisher returns the sink's publisher, made on first use.
func (s *topicSink) publisher(ctx context.Context) (*gpubsub.Publisher, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pub != nil {
		return s.pub, nil
	}
	c, err := s.client.get(ctx)
	if err != nil {
		return nil, err
	}
	s.pub = publisher(c, s.topic)
	return s.pub, nil
}

// Close stops the sink's publisher and releases its share of the client;
// the last sink of an endpoint and key closes it. A publish an attempt
// gave up on may still be in the library's hands, until its own deadline:
// the stop waits for it away from the caller. Closing twice is harmless.
func (s *topicSink) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		p := s.pub
		s.mu.Unlock()
		go func() {
			if p != nil {
				p.Stop()
			}
			s.typ.release(s.client)
		}()
	})
	return nil
}

// describeError turns a failed call into a short reason free of the key.
func (s *topicSink) describeError(attemptCtx context.Context, err error, timeout time.Duration) string {
	// Scrubbed before it is cut, so no part of a secret survives the cut.
	return clip.String(s.scrub(s.reason(attemptCtx, err, timeout)), maxErrorBytes)
}

func (s *topicSink) reason(attemptCtx context.Context, err error, timeout time.Duration) string {
	if refused, ok := errors.AsType[*netguard.RefusedError](err); ok {
		return "destination refused: " + refused.Error()
	}
	if errors.Is(err, errClosed) {
		return "sink closed"
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.OK && st.Code() != codes.Unknown {
		switch st.Code() {
		case codes.NotFound:
			return "topic " + s.topic + " does not exist (" + st.Message() + ")"
		case codes.PermissionDenied:
			return "the credentials may not publish to topic " + s.topic + " (" + st.Message() + ")"
		case codes.Unauthenticated:
			return "Pub/Sub refused the credentials (" + st.Message() + ")"
		case codes.DeadlineExceeded:
			return fmt.Sprintf("no answer within %s", timeout)
		case codes.Unavailable:
			// gRPC folds a failed dial, the address policy's refusal
			// included, into the status message.
			if _, dial, found := strings.Cut(st.Message(), dialPrefix); found {
				return "cannot connect to " + s.endpoint() + ": " + strings.TrimSuffix(dial, `"`)
			}
		}
		return "Pub/Sub error " + st.Code().String() + ": " + st.Message()
	}
	if text, ok := sink.DescribeUnanswered(attemptCtx, err, "answer", timeout); ok {
		return text
	}
	return err.Error()
}

// scrubber masks a service-account key, and its private key and key id on
// their own, wherever they appear in text: a server, or the library
// reporting a key it could not use, may quote them.
func scrubber(serviceAccountKey string) func(string) string {
	if serviceAccountKey == "" {
		return func(text string) string { return text }
	}
	secrets := []string{serviceAccountKey}
	var k struct {
		PrivateKey   string `json:"private_key"`
		PrivateKeyID string `json:"private_key_id"`
	}
	if json.Unmarshal([]byte(serviceAccountKey), &k) == nil {
		secrets = append(secrets, k.PrivateKey, k.PrivateKeyID)
		// The PEM body's lines, each a part of the key on its own.
		for line := range strings.SplitSeq(k.PrivateKey, "\n") {
			if len(line) >= 16 && !strings.HasPrefix(line, "-----") {
				secrets = append(secrets, line)
			}
		}
	}
	return func(text string) string {
		for _, secret := range secrets {
			if secret != "" {
				text = strings.ReplaceAll(text, secret, sink.Masked)
			}
		}
		return text
	}
}
