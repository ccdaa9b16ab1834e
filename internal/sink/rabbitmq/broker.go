package rabbitmq

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

const (
	// maxIdleChannels bounds the confirm channels kept open per broker
	// between attempts; bursts beyond it open channels and close them after.
	maxIdleChannels = 32
	// defaultHandshakeTimeout bounds the TCP, TLS and AMQP handshakes of a
	// connection made under a context without a deadline.
	defaultHandshakeTimeout = 30 * time.Second
	// closeTimeout bounds the polite close of a connection nobody uses.
	closeTimeout = 5 * time.Second
)

// errBrokerClosed is the failure of an attempt on a sink already closed.
var errBrokerClosed = errors.New("sink closed")

// dialConfig returns the amqp091 configuration of one connection attempt
// under ctx. amqp091 takes a context-free dial function, so the closure
// carries ctx to netguard and turns its deadline into the handshake's:
// amqp091 clears the connection's deadline once the AMQP handshake is done.
func (t *Type) dialConfig(uri amqp.URI) func(ctx context.Context) amqp.Config {
	return func(ctx context.Context) amqp.Config {
		props := amqp.NewConnectionProperties()
		props.SetClientConnectionName(t.connName)
		cfg := amqp.Config{
			Properties: props,
			Dial: func(network, address string) (net.Conn, error) {
				conn, err := t.dialer.DialContext(ctx, network, address)
				if err != nil {
					return nil, err
				}
				deadline, ok := ctx.Deadline()
				if !ok {
					deadline = time.Now().Add(defaultHandshakeTimeout)
				}
				if err := conn.SetDeadline(deadline); err != nil {
					conn.Close()
					return nil, err
				}
				return conn, nil
			},
		}
		if uri.Scheme == "amqps" {
			// Set here so amqp091 never builds one from URL parameters.
			cfg.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: t.rootCAs, ServerName: uri.Host}
		}
		return cfg
	}
}

// broker is one AMQP connection, shared by the sinks of one broker URL, and
// its pool of idle confirm channels. The connection is made by the first
// attempt that needs it and remade by the first attempt after it closed.
type broker struct {
	url       string // full URL, password included: never logged or shown
	uri       amqp.URI
	newConfig func(ctx context.Context) amqp.Config

	// connecting is held while a connection is made, as a one-slot
	// semaphore rather than a mutex so that waiting honours each
	// attempt's context.
	connecting chan struct{}

	mu         sync.Mutex
	conn       *amqp.Connection
	connClosed chan *amqp.Error // conn's NotifyClose
	idle       []*confirmChannel
	closed     bool
}

func newBroker(fullURL string, uri amqp.URI, newConfig func(context.Context) amqp.Config) *broker {
	return &broker{url: fullURL, uri: uri, newConfig: newConfig, connecting: make(chan struct{}, 1)}
}

// connection returns the open connection, making one if there is none or
// the broker closed the last.
func (b *broker) connection(ctx context.Context) (*amqp.Connection, error) {
	if conn, err := b.liveConnection(); conn != nil || err != nil {
		return conn, err
	}
	select {
	case b.connecting <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-b.connecting }()
	// Another attempt may have connected while this one waited.
	if conn, err := b.liveConnection(); conn != nil || err != nil {
		return conn, err
	}

	conn, err := amqp.DialConfig(b.url, b.newConfig(ctx))
	if err != nil {
		return nil, err
	}
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))

	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		_ = conn.CloseDeadline(time.Now().Add(closeTimeout))
		return nil, errBrokerClosed
	}
	b.conn, b.connClosed = conn, closed
	b.mu.Unlock()
	return conn, nil
}

// liveConnection returns the connection if it is open; nil, nil means a
// new one is needed. A connection found closed is forgotten with its idle
// channels, which died with it.
func (b *broker) liveConnection() (*amqp.Connection, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errBrokerClosed
	}
	if b.conn == nil {
		return nil, nil
	}
	select {
	case <-b.connClosed: // a reason, or closed without one
		b.conn, b.connClosed, b.idle = nil, nil, nil
		return nil, nil
	default:
		return b.conn, nil
	}
}

// take hands out a confirm channel of the open connection for one publish;
// the caller gives it back with put or discard.
func (b *broker) take(ctx context.Context) (*confirmChannel, error) {
	conn, err := b.connection(ctx)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	for len(b.idle) > 0 {
		cc := b.idle[len(b.idle)-1]
		b.idle = b.idle[:len(b.idle)-1]
		if cc.conn == conn && !cc.isClosed() {
			b.mu.Unlock()
			return cc, nil
		}
	}
	b.mu.Unlock()
	return openConfirmChannel(conn)
}

// put returns a channel whose last publish completed, so that no
// confirmation or return of it can still arrive; any other channel must be
// discarded, or that late arrival would be taken for the next publish's.
func (b *broker) put(cc *confirmChannel) {
	b.mu.Lock()
	keep := !b.closed && cc.conn == b.conn && !cc.isClosed() && len(b.idle) < maxIdleChannels
	if keep {
		b.idle = append(b.idle, cc)
	}
	b.mu.Unlock()
	if !keep {
		b.discard(cc)
	}
}

// discard closes a channel in the background: on a broker that stopped
// answering, the close waits for the connection's heartbeat to give up,
// and no attempt should wait with it.
func (b *broker) discard(cc *confirmChannel) {
	go func() { _ = cc.ch.Close() }()
}

// close closes the connection for good; later attempts fail.
func (b *broker) close() {
	b.mu.Lock()
	conn := b.conn
	b.closed = true
	b.conn, b.connClosed, b.idle = nil, nil, nil
	b.mu.Unlock()
	if conn != nil {
		// The channels close with their connection.
		_ = conn.CloseDeadline(time.Now().Add(closeTimeout))
	}
}

// confirmChannel is a channel in confirm mode, used by one publish at a
// time, so that its one outstanding confirmation and return are that
// publish's.
type confirmChannel struct {
	conn    *amqp.Connection
	ch      *amqp.Channel
	closed  chan *amqp.Error // NotifyClose
	returns chan amqp.Return // NotifyReturn
	// reason is why the broker closed the channel, once seen.
	reason *amqp.Error
	dead   bool
}

func openConfirmChannel(conn *amqp.Connection) (*confirmChannel, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	// Both buffered: amqp091 delivers these from the connection's reader,
	// and one publish at a time has at most one return and one close.
	cc := &confirmChannel{
		conn:    conn,
		ch:      ch,
		closed:  ch.NotifyClose(make(chan *amqp.Error, 1)),
		returns: ch.NotifyReturn(make(chan amqp.Return, 1)),
	}
	if err := ch.Confirm(false); err != nil {
		_ = ch.Close()
		if reason := cc.closeReason(); reason != nil {
			return nil, reason
		}
		return nil, err
	}
	return cc, nil
}

// isClosed reports whether the broker or the library closed the channel,
// keeping the broker's reason when it gave one.
func (cc *confirmChannel) isClosed() bool {
	if !cc.dead {
		select {
		case reason, ok := <-cc.closed:
			cc.dead = true
			if ok {
				cc.reason = reason
			}
		default:
		}
	}
	return cc.dead || cc.ch.IsClosed()
}

// closeReason is the broker's reason for closing the channel, or nil when
// it is open or was closed without one.
func (cc *confirmChannel) closeReason() *amqp.Error {
	cc.isClosed()
	return cc.reason
}
