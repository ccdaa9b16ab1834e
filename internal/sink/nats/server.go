package nats

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

const (
	// defaultHandshakeTimeout bounds the dial and the NATS handshake of a
	// connection made under a context without a deadline.
	defaultHandshakeTimeout = 30 * time.Second
	// minHandshakeTimeout keeps a connection made late in an attempt from
	// being given no time at all.
	minHandshakeTimeout = 100 * time.Millisecond
)

// errServerClosed is the failure of an attempt on a sink already closed.
var errServerClosed = errors.New("sink closed")

// login is how a connection signs in: at most one of a token, a user name
// and password, or a credentials file.
type login struct {
	username string
	credentials
}

// userJWTAndSeed reads a NATS credentials file's content: the decorated
// user JWT and the user's nkey seed. Its errors never quote the content.
func userJWTAndSeed(creds string) (string, string, error) {
	// An undecorated text is taken for the JWT itself; a JWT has three
	// dot-separated parts.
	jwt, err := nkeys.ParseDecoratedJWT([]byte(creds))
	if err != nil || strings.Count(jwt, ".") != 2 {
		return "", "", errors.New("must be a NATS credentials file's content: a USER JWT block and a USER NKEY SEED block")
	}
	keys, err := nkeys.ParseDecoratedUserNKey([]byte(creds))
	if err != nil {
		return "", "", errors.New("must hold the user's nkey seed (-----BEGIN USER NKEY SEED-----)")
	}
	defer keys.Wipe()
	seed, err := keys.Seed()
	if err != nil {
		return "", "", errors.New("must hold the user's nkey seed, not only its public key")
	}
	return jwt, string(seed), nil
}

// connectOptions are the nats.go options of one connection attempt under
// ctx. The dialer carries ctx to the address policy; the handshake gets
// what is left of ctx's time. There is no reconnecting in the background:
// a connection that drops is closed, and the next attempt makes another.
func (t *Type) connectOptions(ctx context.Context, u *url.URL, l login) ([]natsgo.Option, error) {
	timeout := defaultHandshakeTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(deadline), minHandshakeTimeout)
	}
	opts := []natsgo.Option{
		natsgo.Name(t.connName),
		natsgo.Timeout(timeout),
		natsgo.NoReconnect(),
		// The address policy resolves the host itself, so the address it
		// checks is the one dialled.
		natsgo.SkipHostLookup(),
		natsgo.SetCustomDialer(&guardedDialer{ctx: ctx, dial: t.dialer.DialContext}),
		// nats.go writes asynchronous errors to stderr by default; an
		// attempt reports its own.
		natsgo.ErrorHandler(func(*natsgo.Conn, *natsgo.Subscription, error) {}),
		natsgo.NoCallbacksAfterClientClose(),
	}
	if u.Scheme == "tls" {
		opts = append(opts, natsgo.Secure(&tls.Config{MinVersion: tls.VersionTLS12, RootCAs: t.rootCAs}))
	}
	switch {
	case l.Token != "":
		opts = append(opts, natsgo.Token(l.Token))
	case l.Password != "":
		opts = append(opts, natsgo.UserInfo(l.username, l.Password))
	case l.Creds != "":
		jwt, seed, err := userJWTAndSeed(l.Creds)
		if err != nil {
			return nil, errors.New("stored credentials file: " + err.Error())
		}
		opts = append(opts, natsgo.UserJWTAndSeed(jwt, seed))
	}
	return opts, nil
}

// guardedDialer is nats.go's CustomDialer: its Dial takes no context, so
// the dialer carries the attempt's.
type guardedDialer struct {
	ctx  context.Context
	dial func(ctx context.Context, network, address string) (net.Conn, error)
}

func (d *guardedDialer) Dial(network, address string) (net.Conn, error) {
	return d.dial(d.ctx, network, address)
}

// server is one NATS connection, shared by the sinks of one server and
// login. It is made by the first attempt that needs it and remade by the
// first attempt after it closed.
type server struct {
	key     serverKey
	url     *url.URL
	login   login // never logged or shown
	options func(ctx context.Context, u *url.URL, l login) ([]natsgo.Option, error)

	// connecting is held while a connection is made, as a one-slot
	// semaphore rather than a mutex so that waiting honours each
	// attempt's context.
	connecting chan struct{}

	mu     sync.Mutex
	conn   *natsgo.Conn
	js     jetstream.JetStream
	closed bool
}

func newServer(key serverKey, u *url.URL, l login, options func(context.Context, *url.URL, login) ([]natsgo.Option, error)) *server {
	return &server{key: key, url: u, login: l, options: options, connecting: make(chan struct{}, 1)}
}

// jetStream returns the JetStream context of the open connection, making
// a connection if there is none or the server closed the last.
func (s *server) jetStream(ctx context.Context) (jetstream.JetStream, error) {
	if js, err := s.live(); js != nil || err != nil {
		return js, err
	}
	select {
	case s.connecting <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.connecting }()
	// Another attempt may have connected while this one waited.
	if js, err := s.live(); js != nil || err != nil {
		return js, err
	}
	opts, err := s.options(ctx, s.url, s.login)
	if err != nil {
		return nil, err
	}
	conn, err := natsgo.Connect(s.url.String(), opts...)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		conn.Close()
		return nil, errServerClosed
	}
	s.conn, s.js = conn, js
	return js, nil
}

// live returns the JetStream context of the open connection; nil, nil
// means a new connection is needed.
func (s *server) live() (jetstream.JetStream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errServerClosed
	}
	if s.conn == nil {
		return nil, nil
	}
	if s.conn.IsClosed() {
		s.conn, s.js = nil, nil
		return nil, nil
	}
	return s.js, nil
}

// close closes the connection for good; later attempts fail.
func (s *server) close() {
	s.mu.Lock()
	conn := s.conn
	s.closed = true
	s.conn, s.js = nil, nil
	s.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
}
