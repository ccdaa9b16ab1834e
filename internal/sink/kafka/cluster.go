package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/hubctl/hubctl/internal/sink"
)

// clusterSettings are what a cluster's client is built from.
type clusterSettings struct {
	brokers  []string
	clientID string
	dial     func(ctx context.Context, network, address string) (net.Conn, error)
	sasl     sasl.Mechanism // nil: none
	password string         // scrubbed from every error text
}

// clusterSettings turns a stored configuration into client settings: the
// policy-checked dialer, wrapped in TLS when the sink asks for it, and the
// SASL mechanism.
func (t *Type) clusterSettings(pub publicConfig, creds credentials) (clusterSettings, error) {
	s := clusterSettings{brokers: pub.Brokers, clientID: t.clientID, dial: t.dialer.DialContext, password: creds.Password}
	if pub.TLS {
		roots := t.rootCAs
		if pub.CACert != "" {
			roots = x509.NewCertPool()
			if !roots.AppendCertsFromPEM([]byte(pub.CACert)) {
				return clusterSettings{}, errors.New("kafka sink: stored ca_cert holds no certificate")
			}
		}
		s.dial = tlsDial(t.dialer.DialContext, roots)
	}
	if pub.SASL != nil {
		auth := scram.Auth{User: pub.SASL.Username, Pass: creds.Password}
		switch pub.SASL.Mechanism {
		case SASLPlain:
			s.sasl = plain.Auth{User: pub.SASL.Username, Pass: creds.Password}.AsMechanism()
		case SASLScramSHA256:
			s.sasl = auth.AsSha256Mechanism()
		case SASLScramSHA512:
			s.sasl = auth.AsSha512Mechanism()
		default:
			return clusterSettings{}, errors.New("kafka sink: stored sasl mechanism is not one the hub speaks")
		}
	}
	return s, nil
}

// tlsDial wraps a dialer in a TLS handshake verifying the broker's name.
// franz-go ignores its own TLS option when given a dialer, so the
// handshake is made here, after the address policy chose the address.
func tlsDial(dial func(context.Context, string, string) (net.Conn, error), roots *x509.CertPool) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		raw, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		conn := tls.Client(raw, &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots, ServerName: host})
		if err := conn.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, err
		}
		return conn, nil
	}
}

// cluster is one franz-go client, shared by the sinks of one cluster and
// login. It is built by the first attempt that needs it; franz-go keeps
// its connections and reconnects to brokers by itself.
type cluster struct {
	key      clusterKey
	settings clusterSettings

	mu     sync.Mutex
	client *kgo.Client
	closed bool
	// connectFailed is closed, and replaced, when a connection to a
	// broker fails or the broker refuses its SASL login; connectErr is
	// that failure.
	connectFailed chan struct{}
	connectErr    error
	// loginRefused is set from the refused login to the failed
	// connection franz-go reports for it.
	loginRefused bool
	// open counts the broker connections open now.
	open int
}

// errSASLRefused is a broker refusing the sink's SASL login. Brokers
// close the connection rather than say more, so the attempt's own error
// is only an EOF.
var errSASLRefused = errors.New("the brokers refused the credentials (SASL authentication failed)")

var (
	_ kgo.HookBrokerConnect    = (*cluster)(nil)
	_ kgo.HookBrokerE2E        = (*cluster)(nil)
	_ kgo.HookBrokerDisconnect = (*cluster)(nil)
)

// OnBrokerConnect wakes the attempts waiting when a broker cannot be
// reached: franz-go itself would try again until each record's deadline,
// and a worker would be held for the whole attempt timeout by brokers
// that refuse connections. Dispatch's schedule is what waits for them.
//
// Only while no connection to any broker is open: with one broker of a
// cluster down, the others' partitions are still written, and a record
// led by the one that is down waits for the attempt's deadline as it
// would without the hook.
func (c *cluster) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	c.mu.Lock()
	if err == nil {
		c.open++
		c.mu.Unlock()
		return
	}
	// franz-go counts the login as part of connecting, and reports the
	// connection its refusal closed after OnBrokerE2E saw why.
	refused := c.loginRefused
	c.loginRefused = false
	unreachable := c.open == 0
	c.mu.Unlock()
	switch {
	case refused:
		c.connectFailure(errSASLRefused)
	case unreachable:
		c.connectFailure(err)
	}
}

// OnBrokerDisconnect counts the connections left open.
func (c *cluster) OnBrokerDisconnect(kgo.BrokerMetadata, net.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open = max(c.open-1, 0)
}

// OnBrokerE2E wakes the waiting attempts when a broker refuses the SASL
// login, for the same reason.
func (c *cluster) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if key == int16(kmsg.SASLAuthenticate) && e2e.Err() != nil {
		c.mu.Lock()
		c.loginRefused = true
		c.mu.Unlock()
		c.connectFailure(errSASLRefused)
	}
}

func (c *cluster) connectFailure(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.connectErr = err
	if c.connectFailed != nil {
		close(c.connectFailed)
	}
	c.connectFailed = make(chan struct{})
}

// connectFailures is a channel closed at the next failed connection or
// login, and the error of the last one once it is.
func (c *cluster) connectFailures() (<-chan struct{}, func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.connectFailed == nil {
		c.connectFailed = make(chan struct{})
	}
	return c.connectFailed, func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.connectErr
	}
}

// errClusterClosed is the failure of an attempt on a sink already closed.
var errClusterClosed = errors.New("sink closed")

// producer returns the cluster's client, building it on first use.
func (c *cluster) producer() (*kgo.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClusterClosed
	}
	if c.client != nil {
		return c.client, nil
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.settings.brokers...),
		kgo.ClientID(c.settings.clientID),
		kgo.Dialer(c.settings.dial),
		kgo.WithHooks(c),
		// acks=all and the idempotent producer (franz-go's default, named
		// here because the contract requires it): the broker dedupes the
		// client's own re-sends within an attempt.
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// An attempt ends at its deadline even with its record in flight:
		// dispatch, not the client, decides when to try again, and the
		// consumer dedupes what both attempts stored by ce_id.
		kgo.AllowIdempotentProduceCancellation(),
		// Each attempt waits for its own acknowledgement; lingering would
		// only add to every delivery's latency.
		kgo.ProducerLinger(0),
		// A topic that does not exist fails the attempt after one metadata
		// refresh rather than after several.
		kgo.UnknownTopicRetries(1),
		// Backstops only: the attempt's own deadline is the one that fires.
		kgo.ProduceRequestTimeout(sink.MaxAttemptTimeout),
		kgo.RequestTimeoutOverhead(time.Second),
	}
	if c.settings.sasl != nil {
		opts = append(opts, kgo.SASL(c.settings.sasl))
	}
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	c.client = client
	return client, nil
}

// close closes the client for good; later attempts fail.
func (c *cluster) close() {
	c.mu.Lock()
	client := c.client
	c.closed, c.client = true, nil
	c.mu.Unlock()
	if client != nil {
		client.Close()
	}
}
