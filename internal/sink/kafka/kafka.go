// Package kafka is the Kafka sink (docs/concepts.md, Sinks): one produce
// per attempt to the tenant's topic with acks=all and the idempotent
// producer, the event in CloudEvents binary mode (the Kafka protocol
// binding: ce_* headers, the value the event data byte for byte) plus the
// lerian-* values as headers.
//
// A Type keeps one franz-go client per cluster and credential version,
// shared by every subscription's sink that names them, whatever their
// topics; it connects on the first attempt and closes with the last sink.
// Every broker connection, the seeds and the brokers metadata announces
// alike, is dialled through the outbound address policy
// (STREAMING_HUB_ALLOW_PRIVATE_SINKS).
package kafka

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
)

// Name is the sink.type of Kafka subscriptions.
const Name = "kafka"

const (
	// MaxBrokers bounds the seed brokers; a client learns the others.
	MaxBrokers = 16
	// maxTopicLength is Kafka's own limit.
	maxTopicLength = 249
	// MaxPEMBytes bounds ca_cert: a chain of a few certificates.
	MaxPEMBytes = 64 << 10
	// maxCredentialBytes bounds a SASL user name or password.
	maxCredentialBytes = 1024
	// defaultPort is Kafka's usual listener port.
	defaultPort = 9092
)

// The record keys a subscription may choose (sink.key).
const (
	KeyTenant  = "tenant"
	KeySubject = "subject"
	KeyEventID = "event_id"
	KeyNone    = "none"
)

// The SASL mechanisms a sink may use (sink.sasl.mechanism).
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

// Options are what every Kafka sink of one hub shares.
type Options struct {
	// AllowPrivate lets sinks reach loopback, private and reserved
	// addresses (STREAMING_HUB_ALLOW_PRIVATE_SINKS).
	AllowPrivate bool
	// Resolver answers host lookups at dial time; nil means the system's.
	Resolver netguard.Resolver
	// Dial connects to one already-checked IP address; nil means a
	// net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// RootCAs verifies TLS brokers' certificates when a sink names no
	// ca_cert; nil means the system pool.
	RootCAs *x509.CertPool
	// ClientID is the client id brokers see; "" means "hubctl".
	ClientID string
}

// Type is the Kafka sink type. It is safe for concurrent use.
type Type struct {
	allowPrivate bool
	dialer       *netguard.Dialer
	rootCAs      *x509.CertPool
	clientID     string

	clusters sink.Shared[clusterKey, *cluster]
}

var _ sink.Type = (*Type)(nil)

// NewType builds the Kafka sink type. It connects to nothing until a sink
// delivers or probes.
func NewType(opts Options) *Type {
	id := opts.ClientID
	if id == "" {
		id = "hubctl"
	}
	return &Type{
		allowPrivate: opts.AllowPrivate,
		dialer:       &netguard.Dialer{AllowPrivate: opts.AllowPrivate, Resolver: opts.Resolver, Dial: opts.Dial},
		rootCAs:      opts.RootCAs,
		clientID:     id,
	}
}

// Name returns "kafka".
func (t *Type) Name() string { return Name }

// publicConfig is the stored, shown configuration.
type publicConfig struct {
	Brokers []string    `json:"brokers"`
	Topic   string      `json:"topic"`
	Key     string      `json:"key,omitempty"` // "" is KeyTenant
	TLS     bool        `json:"tls,omitempty"`
	CACert  string      `json:"ca_cert,omitempty"`
	SASL    *publicSASL `json:"sasl,omitempty"`
}

// publicSASL is the shown part of sink.sasl: who signs in, and how.
type publicSASL struct {
	Mechanism string `json:"mechanism"`
	Username  string `json:"username"`
}

// credentials is what Config.Credentials holds.
type credentials struct {
	Password string `json:"password"`
}

// passwordField is the key of the SASL password, in sink.sasl and in the
// stored credentials.
const passwordField = "password"

// Parse validates {"type":"kafka","brokers":["host:port",…],"topic",
// "key"?,"tls"?,"ca_cert"?,"sasl"?:{"mechanism","username","password"}}.
// The SASL password is the credential; Destination is
// kafka://<brokers, sorted>/<topic>.
func (t *Type) Parse(raw json.RawMessage) (sink.Config, error) {
	fields, err := sink.DecodeObject(raw, Name, "brokers", "ca_cert", "key", "sasl", "tls", "topic")
	if err != nil {
		return sink.Config{}, err
	}
	var pub publicConfig
	if pub.Brokers, err = t.parseBrokers(fields["brokers"]); err != nil {
		return sink.Config{}, err
	}
	if rawCA, ok := fields["ca_cert"]; ok && string(rawCA) != "null" {
		if pub.CACert, err = parseCACert(rawCA); err != nil {
			return sink.Config{}, err
		}
	}
	if rawKey, ok := fields["key"]; ok && string(rawKey) != "null" {
		if err := json.Unmarshal(rawKey, &pub.Key); err != nil || !slices.Contains([]string{KeyTenant, KeySubject, KeyEventID, KeyNone}, pub.Key) {
			return sink.Config{}, &sink.FieldError{Field: "sink.key", Message: `must be "tenant" (the default), "subject", "event_id" or "none"`}
		}
		if pub.Key == KeyTenant {
			pub.Key = ""
		}
	}
	var creds *credentials
	if rawSASL, ok := fields["sasl"]; ok && string(rawSASL) != "null" {
		if pub.SASL, creds, err = parseSASL(rawSASL); err != nil {
			return sink.Config{}, err
		}
	}
	if rawTLS, ok := fields["tls"]; ok && string(rawTLS) != "null" {
		if err := json.Unmarshal(rawTLS, &pub.TLS); err != nil {
			return sink.Config{}, &sink.FieldError{Field: "sink.tls", Message: "must be true or false"}
		}
	}
	if pub.CACert != "" && !pub.TLS {
		return sink.Config{}, &sink.FieldError{Field: "sink.ca_cert", Message: "needs tls: true: a CA verifies TLS connections only"}
	}
	if pub.Topic, err = requiredString(fields, "topic"); err != nil {
		return sink.Config{}, err
	}
	if err := checkTopic(pub.Topic); err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink.topic", Message: err.Error()}
	}
	public, err := json.Marshal(pub)
	if err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink", Message: "cannot be stored"}
	}
	cfg := sink.Config{Public: public, Destination: Destination(pub.Brokers, pub.Topic)}
	if creds != nil {
		if cfg.Credentials, err = json.Marshal(creds); err != nil {
			return sink.Config{}, &sink.FieldError{Field: "sink.sasl", Message: "cannot be stored"}
		}
	}
	return cfg, nil
}

// Destination is the circuit-breaker key of a Kafka sink (docs/concepts.md,
// Circuit breaker): kafka://<brokers, sorted, comma-separated>/<topic>, so
// that one cluster's seeds listed in any order are one destination.
func Destination(brokers []string, topic string) string {
	return "kafka://" + strings.Join(slices.Sorted(slices.Values(brokers)), ",") + "/" + topic
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

// parseBrokers checks sink.brokers: 1 to MaxBrokers host:port addresses,
// returned host lowercased, IP addresses canonical and the port explicit,
// without repeats. A literal IP address must pass the address policy
// unless private sinks are allowed; host names are judged at dial time.
func (t *Type) parseBrokers(raw json.RawMessage) ([]string, error) {
	var given []string
	if err := json.Unmarshal(raw, &given); err != nil || len(given) == 0 {
		return nil, &sink.FieldError{Field: "sink.brokers", Message: `is required: a list of host:port, as ["kafka-1.example.com:9092"]`}
	}
	if len(given) > MaxBrokers {
		return nil, &sink.FieldError{Field: "sink.brokers", Message: fmt.Sprintf("at most %d brokers: the client learns the others", MaxBrokers)}
	}
	var brokers []string
	for i, b := range given {
		addr, err := normalizeBroker(b)
		if err == nil && !t.allowPrivate {
			if ip, perr := netip.ParseAddr(strings.Trim(addr[:strings.LastIndexByte(addr, ':')], "[]")); perr == nil {
				err = netguard.Allowed(ip)
			}
		}
		if err != nil {
			return nil, &sink.FieldError{Field: "sink.brokers[" + strconv.Itoa(i) + "]", Message: err.Error()}
		}
		if !slices.Contains(brokers, addr) {
			brokers = append(brokers, addr)
		}
	}
	return brokers, nil
}

// normalizeBroker checks one host:port.
func normalizeBroker(b string) (string, error) {
	if b == "" || len(b) > 300 || strings.ContainsFunc(b, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return "", errors.New("must be host:port without spaces")
	}
	if strings.Contains(b, "://") || strings.ContainsAny(b, "/?#@") {
		return "", errors.New("must be host:port, without a scheme, path or user")
	}
	host, port, err := net.SplitHostPort(b)
	if err != nil {
		host, port = b, strconv.Itoa(defaultPort)
		if strings.Count(b, ":") > 1 && !strings.HasPrefix(b, "[") {
			return "", errors.New("an IPv6 address must be in brackets, as [2001:db8::1]:9092")
		}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", errors.New("port must be between 1 and 65535")
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return "", errors.New("must name a host")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.String()
	}
	return net.JoinHostPort(host, port), nil
}

// checkTopic applies Kafka's topic naming rule.
func checkTopic(topic string) error {
	if len(topic) > maxTopicLength {
		return fmt.Errorf("must be at most %d characters", maxTopicLength)
	}
	if topic == "." || topic == ".." {
		return errors.New(`must not be "." or ".."`)
	}
	for i := range len(topic) {
		c := topic[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '.' && c != '_' && c != '-' {
			return errors.New("may contain only letters, digits, dots, underscores and hyphens")
		}
	}
	return nil
}

// parseCACert checks sink.ca_cert: PEM certificates of the authorities
// trusted for this cluster instead of the system's.
func parseCACert(raw json.RawMessage) (string, error) {
	var value string
	if err := json.Unmarshal(raw, &value); err != nil || value == "" {
		return "", &sink.FieldError{Field: "sink.ca_cert", Message: "must be PEM certificates as a string"}
	}
	if len(value) > MaxPEMBytes {
		return "", &sink.FieldError{Field: "sink.ca_cert", Message: fmt.Sprintf("must be at most %d bytes", MaxPEMBytes)}
	}
	rest := []byte(value)
	found := false
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return "", &sink.FieldError{Field: "sink.ca_cert", Message: "must hold only certificates (" + block.Type + " found)"}
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return "", &sink.FieldError{Field: "sink.ca_cert", Message: "holds a certificate that does not parse"}
		}
		found = true
	}
	if !found {
		return "", &sink.FieldError{Field: "sink.ca_cert", Message: "must hold at least one PEM certificate"}
	}
	return value, nil
}

// saslShape is what sink.sasl may be, for error messages.
const saslShape = `must be {"mechanism": "PLAIN"|"SCRAM-SHA-256"|"SCRAM-SHA-512", "username", "password"}`

// parseSASL checks sink.sasl. Its errors never quote the password.
func parseSASL(raw json.RawMessage) (*publicSASL, *credentials, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, nil, &sink.FieldError{Field: "sink.sasl", Message: saslShape}
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if name != "mechanism" && name != "username" && name != passwordField {
			return nil, nil, &sink.FieldError{Field: "sink.sasl." + name, Message: "unknown field; sasl has only mechanism, username and password"}
		}
	}
	text := func(name string) (string, error) {
		var v string
		if err := json.Unmarshal(fields[name], &v); err != nil || v == "" {
			return "", &sink.FieldError{Field: "sink.sasl." + name, Message: "is required, a non-empty string"}
		}
		if len(v) > maxCredentialBytes || strings.ContainsFunc(v, unicode.IsControl) {
			return "", &sink.FieldError{Field: "sink.sasl." + name, Message: fmt.Sprintf("must be at most %d bytes without control characters", maxCredentialBytes)}
		}
		return v, nil
	}
	mechanism, err := text("mechanism")
	if err != nil {
		return nil, nil, err
	}
	if mechanism = strings.ToUpper(mechanism); mechanism != SASLPlain && mechanism != SASLScramSHA256 && mechanism != SASLScramSHA512 {
		return nil, nil, &sink.FieldError{Field: "sink.sasl.mechanism", Message: `must be "PLAIN", "SCRAM-SHA-256" or "SCRAM-SHA-512"`}
	}
	username, err := text("username")
	if err != nil {
		return nil, nil, err
	}
	password, err := text(passwordField)
	if err != nil {
		return nil, nil, err
	}
	return &publicSASL{Mechanism: mechanism, Username: username}, &credentials{Password: password}, nil
}

// clusterKey identifies one cluster and login: sinks with the same key
// share a client. The password is kept as a hash: the key must tell a
// rotated password from the old one, and need not hold it a second time.
type clusterKey struct {
	brokers      string // sorted
	tls          bool
	caHash       [32]byte
	mechanism    string
	username     string
	passwordHash [32]byte
}

// Open builds the sink of one subscription from its stored configuration
// with Credentials decrypted. It connects to nothing: the first attempt
// does. Sinks of one cluster and login share its client until the last of
// them is closed. signingSecrets are ignored.
func (t *Type) Open(cfg sink.Config, _ []string) (sink.Sink, error) {
	var pub publicConfig
	if err := json.Unmarshal(cfg.Public, &pub); err != nil {
		return nil, errors.New("kafka sink: stored configuration is not a JSON object with brokers and topic")
	}
	if len(pub.Brokers) == 0 {
		return nil, errors.New("kafka sink: stored configuration has no brokers")
	}
	for _, b := range pub.Brokers {
		if _, err := normalizeBroker(b); err != nil {
			return nil, fmt.Errorf("kafka sink: stored broker: %w", err)
		}
	}
	if err := checkTopic(pub.Topic); err != nil || pub.Topic == "" {
		return nil, errors.New("kafka sink: stored topic is not a topic name")
	}
	var creds credentials
	if len(cfg.Credentials) > 0 {
		// The decoder's message could quote part of the secret.
		if err := json.Unmarshal(cfg.Credentials, &creds); err != nil {
			return nil, errors.New("kafka sink: stored credentials are not a JSON object")
		}
	}
	if pub.SASL != nil && creds.Password == "" {
		return nil, errors.New("kafka sink: stored sasl has no password")
	}
	settings, err := t.clusterSettings(pub, creds)
	if err != nil {
		return nil, err
	}
	key := clusterKey{
		brokers:      strings.Join(slices.Sorted(slices.Values(pub.Brokers)), ","),
		tls:          pub.TLS,
		caHash:       sha256.Sum256([]byte(pub.CACert)),
		passwordHash: sha256.Sum256([]byte(creds.Password)),
	}
	if pub.SASL != nil {
		key.mechanism, key.username = pub.SASL.Mechanism, pub.SASL.Username
	}
	return &topicSink{typ: t, cluster: t.acquire(key, settings), topic: pub.Topic, key: pub.Key}, nil
}

// acquire returns the shared cluster client of a key, counting one more
// sink on it.
func (t *Type) acquire(key clusterKey, settings clusterSettings) *cluster {
	return t.clusters.Acquire(key, func() *cluster { return &cluster{key: key, settings: settings} })
}

// release counts one sink less on c and closes its client when none is
// left.
func (t *Type) release(c *cluster) {
	if t.clusters.Release(c.key) {
		c.close()
	}
}
