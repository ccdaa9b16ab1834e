package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hubctl/hubctl/internal/clip"
	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
)

// maxErrorBytes keeps recorded errors short.
const maxErrorBytes = 200

// natsSink is one subscription's subject on a shared server connection.
type natsSink struct {
	typ       *Type
	server    *server
	subject   string
	closeOnce sync.Once
}

// publishAck is what a successful publish records as the response:
// JetStream's own names for what it answered.
type publishAck struct {
	Stream    string `json:"stream"`
	Sequence  uint64 `json:"seq"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

// Deliver publishes d once to JetStream and succeeds only when a stream
// acknowledges it. A retry of a publish that did arrive is acknowledged as
// a duplicate, within the stream's duplicate window, and stored once.
func (s *natsSink) Deliver(ctx context.Context, d sink.Delivery) sink.Outcome {
	timeout := sink.AttemptTimeout(d.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	js, err := s.server.jetStream(ctx)
	if err != nil {
		return sink.Outcome{Error: s.describeError(ctx, err, timeout)}
	}
	// One attempt is one publish: JetStream's own retry on "no
	// responders" would hide a subject no stream captures behind waits.
	ack, err := js.PublishMsg(ctx, message(s.subject, d), jetstream.WithMsgID(d.EventID), jetstream.WithRetryAttempts(0))
	if err != nil {
		return sink.Outcome{Error: s.describeError(ctx, err, timeout)}
	}
	response, _ := json.Marshal(publishAck{Stream: ack.Stream, Sequence: ack.Sequence, Duplicate: ack.Duplicate})
	return sink.Outcome{OK: true, Response: response}
}

// Probe connects with the subscription's credentials and asks JetStream
// which stream captures the subject: it proves the server accepts the
// login and that deliveries would be stored, and publishes nothing.
func (s *natsSink) Probe(ctx context.Context, p sink.ProbeRequest) error {
	timeout := sink.AttemptTimeout(p.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	js, err := s.server.jetStream(ctx)
	if err != nil {
		return errors.New(s.describeError(ctx, err, timeout))
	}
	if _, err := js.StreamNameBySubject(ctx, s.subject); err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("no JetStream stream captures subject %q: deliveries would not be stored", s.subject)
		}
		return errors.New(s.describeError(ctx, err, timeout))
	}
	return nil
}

// Close releases this sink's share of the server connection; the last
// sink of a server and login closes it. Closing twice is harmless.
func (s *natsSink) Close() error {
	s.closeOnce.Do(func() { s.typ.release(s.server) })
	return nil
}

// message is the NATS message of one delivery (docs/concepts.md, Sinks):
// the event data as it is, the CloudEvents attributes as ce-* headers
// (binary mode of the CloudEvents NATS binding), and sink.Attributes; the
// event id also travels as Nats-Msg-Id.
func message(subject string, d sink.Delivery) *natsgo.Msg {
	header := natsgo.Header{}
	for _, attr := range sink.CloudEventsAttributes(d) {
		header.Set("ce-"+attr.Name, attr.Value)
	}
	header.Set("content-type", d.ContentType())
	for _, attr := range sink.Attributes(d) {
		header.Set(attr.Name, attr.Value)
	}
	return &natsgo.Msg{Subject: subject, Header: header, Data: d.Payload}
}

// describeError turns a failed attempt into a short reason free of
// credentials.
func (s *natsSink) describeError(attemptCtx context.Context, err error, timeout time.Duration) string {
	// Scrubbed before it is cut, so no part of a secret survives the cut.
	return clip.String(s.server.login.scrub(s.reason(attemptCtx, err, timeout)), maxErrorBytes)
}

func (s *natsSink) reason(attemptCtx context.Context, err error, timeout time.Duration) string {
	if refused, ok := errors.AsType[*netguard.RefusedError](err); ok {
		return "destination refused: " + refused.Error()
	}
	if errors.Is(err, jetstream.ErrNoStreamResponse) {
		return fmt.Sprintf("no JetStream stream captures subject %q (no responders)", s.subject)
	}
	if apiErr, ok := errors.AsType[*jetstream.APIError](err); ok {
		return "JetStream error " + strconv.Itoa(int(apiErr.ErrorCode)) + ": " + apiErr.Description
	}
	if errors.Is(err, natsgo.ErrAuthorization) || errors.Is(err, natsgo.ErrAuthExpired) || errors.Is(err, natsgo.ErrAuthRevoked) {
		return "the server refused the credentials (" + err.Error() + ")"
	}
	if errors.Is(err, natsgo.ErrTimeout) { // the library's own wait for the acknowledgement
		return fmt.Sprintf("no acknowledgement within %s", timeout)
	}
	if text, ok := sink.DescribeUnanswered(attemptCtx, err, "acknowledgement", timeout); ok {
		return text
	}
	return err.Error()
}

// scrub masks the login's secrets wherever they appear in text: a server,
// or one posing as one, may quote what it was sent.
func (l login) scrub(text string) string {
	for _, secret := range []string{l.Creds, l.Token, l.Password} {
		if secret != "" {
			text = strings.ReplaceAll(text, secret, sink.Masked)
		}
	}
	return text
}
