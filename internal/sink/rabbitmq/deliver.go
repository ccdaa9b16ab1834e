package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hubctl/hubctl/internal/clip"
	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
)

const (
	// maxErrorBytes keeps recorded errors short.
	maxErrorBytes = 200
	// appID names the publisher in every message's properties.
	appID = "hubctl"
)

// rabbitSink is one subscription's exchange on a shared broker connection.
type rabbitSink struct {
	typ        *Type
	broker     *broker
	exchange   string
	routingKey *string // nil: the event key
	closeOnce  sync.Once
}

// Deliver publishes d once, mandatory and persistent, and succeeds only
// when the broker confirms it: a nack, a return (no queue bound for the
// routing key) or a closed channel is a failure. The attempt runs in its
// own goroutine because amqp091's channel and publish calls take no
// context: the answer comes within d.Timeout even when the broker stalls,
// and the goroutine discards what it was using when it finishes late.
func (s *rabbitSink) Deliver(ctx context.Context, d sink.Delivery) sink.Outcome {
	timeout := sink.AttemptTimeout(d.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	key := d.EventKey
	if s.routingKey != nil {
		key = *s.routingKey
	}
	msg := publishing(d)
	err := runBounded(ctx, func() error { return s.broker.publish(ctx, s.exchange, key, msg) })
	if err != nil {
		return sink.Outcome{Error: describeError(ctx, err, timeout)}
	}
	return sink.Outcome{OK: true}
}

// Close releases this sink's share of the broker connection; the last
// sink of a broker URL closes it. Closing twice is harmless.
func (s *rabbitSink) Close() error {
	s.closeOnce.Do(func() { s.typ.release(s.broker) })
	return nil
}

// runBounded runs attempt in a goroutine and returns its error, or ctx's
// once ctx ends first.
func runBounded(ctx context.Context, attempt func() error) error {
	result := make(chan error, 1)
	go func() { result <- attempt() }()
	select {
	case err := <-result:
		return err
	case <-ctx.Done():
		// An answer that arrived together with the deadline still counts.
		select {
		case err := <-result:
			return err
		default:
			return ctx.Err()
		}
	}
}

// publishing is the message of one delivery.
func publishing(d sink.Delivery) amqp.Publishing {
	// The headers are sink.Attributes (docs/concepts.md, Sinks).
	headers := amqp.Table{}
	for _, attr := range sink.Attributes(d) {
		headers[attr.Name] = attr.Value
	}
	return amqp.Publishing{
		Headers:      headers,
		ContentType:  d.ContentType(),
		DeliveryMode: amqp.Persistent,
		MessageId:    d.EventID,
		Timestamp:    d.Time,
		Type:         d.EventKey,
		AppId:        appID,
		Body:         d.Payload,
	}
}

// errNacked is a negative publisher confirmation.
var errNacked = errors.New("the broker refused the message (nack)")

// returnedError is a mandatory message the broker could not route.
type returnedError struct {
	exchange, routingKey string
	code                 uint16
	text                 string
}

func (e *returnedError) Error() string {
	return fmt.Sprintf("unroutable: exchange %q has no queue bound for routing key %q (%d %s)",
		e.exchange, e.routingKey, e.code, e.text)
}

// publish makes the one publish of an attempt on a channel of its own and
// waits for the broker's confirmation.
func (b *broker) publish(ctx context.Context, exchange, key string, msg amqp.Publishing) error {
	cc, err := b.take(ctx)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		b.put(cc) // nothing was published on it
		return err
	}
	confirm, err := cc.ch.PublishWithDeferredConfirm(exchange, key, true, false, msg)
	if err != nil {
		b.discard(cc)
		if reason := cc.closeReason(); reason != nil {
			return reason
		}
		return err
	}
	if confirm == nil { // only on a channel not in confirm mode, which take never gives
		b.discard(cc)
		return errors.New("the channel is not in confirm mode")
	}
	select {
	case <-confirm.Done():
	case <-ctx.Done():
		b.discard(cc) // its confirmation may still come and must not be taken for another's
		return ctx.Err()
	}
	if !confirm.Acked() {
		// amqp091 nacks what was outstanding when the channel closed, as
		// when the exchange does not exist; the broker's reason says more.
		if reason := cc.closeReason(); reason != nil {
			b.discard(cc)
			return reason
		}
		b.put(cc)
		return errNacked
	}
	// The broker sends a return before the confirmation of the same
	// message, and amqp091 queues it before completing the confirmation,
	// so it is here now if there is one.
	select {
	case ret, ok := <-cc.returns:
		if ok {
			b.put(cc)
			return &returnedError{exchange: exchange, routingKey: key, code: ret.ReplyCode, text: ret.ReplyText}
		}
	default:
	}
	b.put(cc)
	return nil
}

// checkExchange is the probe: a passive declare on a channel of its own,
// since a failed one closes its channel.
func (b *broker) checkExchange(ctx context.Context, exchange string) error {
	conn, err := b.connection(ctx)
	if err != nil {
		return err
	}
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer func() { _ = ch.Close() }()
	// A passive declare only checks existence; the broker ignores the kind.
	return ch.ExchangeDeclarePassive(exchange, amqp.ExchangeDirect, false, false, false, false, nil)
}

// describeError turns a failed attempt into a short reason. Nothing here
// quotes the broker URL: dial errors name the address dialled, amqp091's
// errors the broker's reply.
func describeError(attemptCtx context.Context, err error, timeout time.Duration) string {
	if refused, ok := errors.AsType[*netguard.RefusedError](err); ok {
		return "destination refused: " + refused.Error()
	}
	// The handshake's socket deadline is the attempt's.
	if text, ok := sink.DescribeUnanswered(attemptCtx, err, "confirmation", timeout); ok {
		return text
	}
	if amqpErr, ok := errors.AsType[*amqp.Error](err); ok {
		return clip.String(describeAMQPError(amqpErr), maxErrorBytes)
	}
	return clip.String(err.Error(), maxErrorBytes)
}

// describeAMQPError words a broker or library error: who closed what, the
// broker's reply text and its AMQP reply code.
func describeAMQPError(e *amqp.Error) string {
	if errors.Is(e, amqp.ErrCredentials) {
		return "the broker refused the user name or password"
	}
	if errors.Is(e, amqp.ErrVhost) {
		return "the broker refused access to the virtual host"
	}
	who := "the connection"
	switch {
	case e.Server && e.Recover:
		who = "the broker closed the channel"
	case e.Server:
		who = "the broker closed the connection"
	case e.Code == amqp.ChannelError:
		who = "the broker connection is not open"
	}
	return who + ": " + e.Reason + " (" + strconv.Itoa(e.Code) + ")"
}
