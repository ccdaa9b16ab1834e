// Package rabbitmq is the RabbitMQ sink (docs/concepts.md, Sinks): one persistent, mandatory
// publish per attempt to the tenant's exchange, confirmed by the broker.
//
// A Type keeps one AMQP connection per broker URL, shared by every
// subscription's sink that names it, and a small pool of confirm-mode
// channels on it. A connection or channel the broker closed is noticed and
// replaced on the next attempt, never in the background: an idle broker
// costs nothing, and a broken one is retried on dispatch's schedule.
package rabbitmq

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
)

// Name is the sink.type of RabbitMQ subscriptions.
const Name = "rabbitmq"

const (
	// MaxURLLength bounds the stored URL.
	MaxURLLength = 2048
	// maxShortString is AMQP's limit on exchange names and routing keys.
	maxShortString = 255
)

// Options are what every RabbitMQ sink of one hub shares.
type Options struct {
	// AllowPrivate lets sinks reach loopback, private and reserved
	// addresses (STREAMING_HUB_ALLOW_PRIVATE_SINKS).
	AllowPrivate bool
	// Resolver answers host lookups at dial time; nil means the system's.
	Resolver netguard.Resolver
	// Dial connects to one already-checked IP address; nil means a
	// net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// RootCAs verifies amqps brokers' certificates; nil means the system
	// pool.
	RootCAs *x509.CertPool
	// ConnectionName is shown in the broker's connection list; "" means
	// "hubctl".
	ConnectionName string
}

// Type is the RabbitMQ sink type. It is safe for concurrent use.
type Type struct {
	allowPrivate bool
	dialer       *netguard.Dialer
	rootCAs      *x509.CertPool
	connName     string

	brokers sink.Shared[string, *broker] // by full URL, credentials included
}

var _ sink.Type = (*Type)(nil)

// NewType builds the RabbitMQ sink type. It connects to nothing until a
// sink delivers or probes.
func NewType(opts Options) *Type {
	name := opts.ConnectionName
	if name == "" {
		name = "hubctl"
	}
	return &Type{
		allowPrivate: opts.AllowPrivate,
		dialer:       &netguard.Dialer{AllowPrivate: opts.AllowPrivate, Resolver: opts.Resolver, Dial: opts.Dial},
		rootCAs:      opts.RootCAs,
		connName:     name,
	}
}

// Name returns "rabbitmq".
func (t *Type) Name() string { return Name }

// publicConfig is the stored, shown configuration: the URL without its
// password.
type publicConfig struct {
	URL      string `json:"url"`
	Exchange string `json:"exchange"`
	// RoutingKey nil means the event key of each delivery; "" is an
	// explicit empty key (fanout and headers exchanges ignore it).
	RoutingKey *string `json:"routing_key,omitempty"`
}

// credentials is what Config.Credentials holds: the URL's password, kept
// out of Public because Public is shown on reads.
type credentials struct {
	Password string `json:"password"`
}

// passwordField is the key of the password in Config.Credentials.
const passwordField = "password"

// Parse validates {"type":"rabbitmq","url":"amqp(s)://…","exchange":"…",
// "routing_key":"…"?}. The URL's password moves to Credentials; Public keeps
// the URL without it, and Destination is scheme://host:port/vhost/exchange.
// A literal IP address in the URL must pass the address policy unless
// private sinks are allowed; hostnames are judged at dial time.
func (t *Type) Parse(raw json.RawMessage) (sink.Config, error) {
	fields, err := sink.DecodeObject(raw, Name, "url", "exchange", "routing_key")
	if err != nil {
		return sink.Config{}, err
	}
	target, err := requiredString(fields, "url")
	if err != nil {
		return sink.Config{}, err
	}
	broker, err := parseBrokerURL(target)
	if err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink.url", Message: err.Error()}
	}
	if ip, err := netip.ParseAddr(broker.uri.Host); err == nil && !t.allowPrivate {
		if err := netguard.Allowed(ip); err != nil {
			return sink.Config{}, &sink.FieldError{Field: "sink.url", Message: err.Error()}
		}
	}

	exchange, err := requiredString(fields, "exchange")
	if err != nil {
		return sink.Config{}, err
	}
	if err := checkName(exchange); err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink.exchange", Message: err.Error()}
	}

	var routingKey *string
	if rawKey, present := fields["routing_key"]; present && string(rawKey) != "null" {
		var key string
		if err := json.Unmarshal(rawKey, &key); err != nil {
			return sink.Config{}, &sink.FieldError{Field: "sink.routing_key", Message: "must be a string"}
		}
		if key != "" {
			if err := checkName(key); err != nil {
				return sink.Config{}, &sink.FieldError{Field: "sink.routing_key", Message: err.Error()}
			}
		}
		routingKey = &key
	}

	public, err := json.Marshal(publicConfig{URL: broker.public, Exchange: exchange, RoutingKey: routingKey})
	if err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink", Message: "cannot be stored"}
	}
	cfg := sink.Config{Public: public, Destination: Destination(broker.uri, exchange)}
	if broker.hasPassword {
		creds, err := json.Marshal(credentials{Password: broker.uri.Password})
		if err != nil {
			return sink.Config{}, &sink.FieldError{Field: "sink.url", Message: "cannot be stored"}
		}
		cfg.Credentials = creds
	}
	return cfg, nil
}

func requiredString(fields map[string]json.RawMessage, name string) (string, error) {
	raw, present := fields[name]
	if !present || string(raw) == "null" {
		return "", &sink.FieldError{Field: "sink." + name, Message: "is required"}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", &sink.FieldError{Field: "sink." + name, Message: "must be a string"}
	}
	if s == "" {
		return "", &sink.FieldError{Field: "sink." + name, Message: "is required"}
	}
	return s, nil
}

// brokerURL is a checked AMQP URL split into what is shown and what is not.
type brokerURL struct {
	uri         amqp.URI
	public      string // the URL without its password
	hasPassword bool
}

// parseBrokerURL checks an AMQP URL. Its errors never quote the URL, which
// holds a password: net/url's and amqp091's errors do, so neither is
// passed on.
func parseBrokerURL(target string) (brokerURL, error) {
	if len(target) > MaxURLLength {
		return brokerURL{}, fmt.Errorf("must be at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(target)
	if err != nil {
		return brokerURL{}, errors.New("not a valid URL (percent-encode reserved characters in the user name and password)")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "amqp" && scheme != "amqps" {
		return brokerURL{}, errors.New("scheme must be amqp or amqps")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return brokerURL{}, errors.New("must name the broker's host, as amqp://host:port/vhost")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return brokerURL{}, errors.New("port must be between 1 and 65535")
		}
	}
	// Query parameters tune the connection, and some (certfile, keyfile)
	// would make the hub read files of its own host; the hub owns those.
	if u.RawQuery != "" || u.ForceQuery {
		return brokerURL{}, errors.New("must not have a query: connection settings belong to the hub")
	}
	if u.Fragment != "" {
		return brokerURL{}, errors.New("must not have a fragment")
	}
	// The scheme is lowercased first: amqp091 matches it exactly.
	u.Scheme = scheme
	uri, err := amqp.ParseURI(u.String())
	if err != nil {
		return brokerURL{}, errors.New("not a valid AMQP URL")
	}
	if err := checkName(uri.Vhost); err != nil {
		return brokerURL{}, errors.New("virtual host " + err.Error())
	}
	_, hasPassword := u.User.Password()
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	return brokerURL{uri: uri, public: u.String(), hasPassword: hasPassword}, nil
}

// checkName applies AMQP's short-string limit to an exchange name, routing
// key or virtual host, and refuses control characters, which no broker
// tool could display.
func checkName(s string) error {
	switch {
	case len(s) > maxShortString:
		return fmt.Errorf("must be at most %d bytes", maxShortString)
	case !utf8.ValidString(s):
		return errors.New("must be valid UTF-8")
	case strings.ContainsFunc(s, unicode.IsControl):
		return errors.New("must not contain control characters")
	}
	return nil
}

// Destination is the circuit-breaker key of a RabbitMQ sink (docs/concepts.md, Circuit breaker):
// scheme://host:port/vhost/exchange, host lowercased and IP addresses
// canonical, vhost and exchange path-escaped (the default vhost "/" reads
// %2F). It never includes the user name or password.
func Destination(uri amqp.URI, exchange string) string {
	return strings.ToLower(uri.Scheme) + "://" + hostPort(uri) +
		"/" + url.PathEscape(uri.Vhost) + "/" + url.PathEscape(exchange)
}

// hostPort is the broker's address, host lowercased and IP addresses
// canonical, so that spellings of one broker compare equal.
func hostPort(uri amqp.URI) string {
	host := strings.ToLower(uri.Host)
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.String()
	} else {
		host = strings.TrimSuffix(host, ".")
	}
	return net.JoinHostPort(host, strconv.Itoa(uri.Port))
}

// Open builds the sink of one subscription from its stored configuration
// with Credentials decrypted. It connects to nothing: the first attempt
// does. Sinks naming the same broker URL share its connection until the
// last of them is closed. signingSecrets are ignored.
func (t *Type) Open(cfg sink.Config, _ []string) (sink.Sink, error) {
	var c publicConfig
	if err := json.Unmarshal(cfg.Public, &c); err != nil {
		return nil, errors.New("rabbitmq sink: stored configuration is not a JSON object with url and exchange")
	}
	if c.Exchange == "" {
		return nil, errors.New("rabbitmq sink: stored configuration has no exchange")
	}
	u, err := url.Parse(c.URL)
	if err != nil || u.User != nil && hasPassword(u.User) {
		return nil, errors.New("rabbitmq sink: stored url is not a URL without a password")
	}
	if len(cfg.Credentials) > 0 {
		var creds credentials
		if err := json.Unmarshal(cfg.Credentials, &creds); err != nil {
			return nil, errors.New("rabbitmq sink: stored credentials are not a JSON object with a password")
		}
		username := ""
		if u.User != nil {
			username = u.User.Username()
		}
		u.User = url.UserPassword(username, creds.Password)
	}
	full := u.String()
	checked, err := parseBrokerURL(full)
	if err != nil {
		return nil, fmt.Errorf("rabbitmq sink: stored url: %w", err)
	}
	return &rabbitSink{
		typ:        t,
		broker:     t.acquire(full, checked.uri),
		exchange:   c.Exchange,
		routingKey: c.RoutingKey,
	}, nil
}

func hasPassword(u *url.Userinfo) bool {
	_, ok := u.Password()
	return ok
}

// acquire returns the shared broker of a URL, counting one more sink on it.
func (t *Type) acquire(fullURL string, uri amqp.URI) *broker {
	return t.brokers.Acquire(fullURL, func() *broker { return newBroker(fullURL, uri, t.dialConfig(uri)) })
}

// release counts one sink less on b and closes its connection when none is
// left.
func (t *Type) release(b *broker) {
	if t.brokers.Release(b.url) {
		b.close()
	}
}
