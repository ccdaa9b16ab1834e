// Package pubsub is the Google Cloud Pub/Sub sink (docs/concepts.md,
// Sinks): one publish per attempt to the tenant's topic, the event data
// byte for byte, the CloudEvents attributes as ce-* attributes (binary
// mode of the CloudEvents Pub/Sub binding) and the lerian-* values as
// attributes of their own; an ordered subscription's ordering key becomes
// the message's ordering key.
//
// A Type keeps one client per endpoint and credential version, shared by
// every subscription's sink that names them, whatever their projects and
// topics; it is built on the first attempt and closed with the last sink.
// Its gRPC connections are dialled through the outbound address policy
// (STREAMING_HUB_ALLOW_PRIVATE_SINKS).
//
// A sink publishes only with the key it is given: without credentials_json
// it must name an endpoint (an emulator), reached over plain gRPC without
// authentication, as the client library does for PUBSUB_EMULATOR_HOST; the
// hub's own Google credentials are never used.
package pubsub

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
)

// Name is the sink.type of Pub/Sub subscriptions.
const Name = "pubsub"

const (
	// defaultEndpoint is Google's global Pub/Sub endpoint, the one the
	// client reaches when a sink names none.
	defaultEndpoint = "pubsub.googleapis.com:443"
	// googleTokenURI is the only token endpoint a service-account key may
	// name: the hub posts a signed assertion there, so another address
	// would be a request to wherever the tenant pointed it.
	googleTokenURI = "https://oauth2.googleapis.com/token"
	// MaxEndpointLength bounds sink.endpoint.
	MaxEndpointLength = 255
	// maxProjectLength allows domain-scoped project ids
	// (example.com:my-project); plain ones are at most 30 characters.
	maxProjectLength = 100
	// Pub/Sub's own bounds on a topic id.
	minTopicLength = 3
	maxTopicLength = 255
	// MaxCredentialsBytes bounds credentials_json: a service-account key
	// is about 2.5 KiB.
	MaxCredentialsBytes = 16 << 10
	// credentialsField is the secret field of the sink object and of the
	// stored credentials.
	credentialsField = "credentials_json"
)

// Options are what every Pub/Sub sink of one hub shares.
type Options struct {
	// AllowPrivate lets sinks reach loopback, private and reserved
	// addresses (STREAMING_HUB_ALLOW_PRIVATE_SINKS).
	AllowPrivate bool
	// Resolver answers host lookups at dial time; nil means the system's.
	Resolver netguard.Resolver
	// Dial connects to one already-checked IP address; nil means a
	// net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Type is the Pub/Sub sink type. It is safe for concurrent use.
type Type struct {
	allowPrivate bool
	dialer       *netguard.Dialer

	clients sink.Shared[clientKey, *client]
}

var _ sink.Type = (*Type)(nil)

// NewType builds the Pub/Sub sink type. It connects to nothing until a
// sink delivers or probes.
func NewType(opts Options) *Type {
	return &Type{
		allowPrivate: opts.AllowPrivate,
		dialer:       &netguard.Dialer{AllowPrivate: opts.AllowPrivate, Resolver: opts.Resolver, Dial: opts.Dial},
	}
}

// Name returns "pubsub".
func (t *Type) Name() string { return Name }

// publicConfig is the stored, shown configuration.
type publicConfig struct {
	Project  string `json:"project"`
	Topic    string `json:"topic"`
	Endpoint string `json:"endpoint,omitempty"`
}

// credentials is what Config.Credentials holds.
type credentials struct {
	JSON string `json:"credentials_json"`
}

// Parse validates {"type":"pubsub","project":"…","topic":"…",
// "credentials_json":"<service-account key>"?,"endpoint":"host:port"?}.
// Public keeps the project, topic and endpoint; the key is Credentials.
// Destination is pubsub://<endpoint>/projects/<project>/topics/<topic>.
func (t *Type) Parse(raw json.RawMessage) (sink.Config, error) {
	fields, err := sink.DecodeObject(raw, Name, credentialsField, "endpoint", "project", "topic")
	if err != nil {
		return sink.Config{}, err
	}
	pub := publicConfig{}
	if pub.Project, err = requiredString(fields, "project"); err != nil {
		return sink.Config{}, err
	}
	if err := CheckProject(pub.Project); err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink.project", Message: err.Error()}
	}
	if pub.Topic, err = requiredString(fields, "topic"); err != nil {
		return sink.Config{}, err
	}
	if err := CheckTopic(pub.Topic); err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink.topic", Message: err.Error()}
	}
	if endpoint, present, err := optionalString(fields, "endpoint"); err != nil {
		return sink.Config{}, err
	} else if present {
		if pub.Endpoint, err = CheckEndpoint(endpoint, t.allowPrivate); err != nil {
			return sink.Config{}, &sink.FieldError{Field: "sink.endpoint", Message: err.Error()}
		}
	}
	key, present, err := optionalString(fields, credentialsField)
	if err != nil {
		return sink.Config{}, err
	}
	if present {
		if err := CheckServiceAccountKey(key); err != nil {
			return sink.Config{}, &sink.FieldError{Field: "sink." + credentialsField, Message: err.Error()}
		}
	} else if pub.Endpoint == "" {
		return sink.Config{}, &sink.FieldError{Field: "sink." + credentialsField,
			Message: "is required unless sink.endpoint names an emulator: the hub publishes to Google only with the key a subscription gives it"}
	}
	public, err := json.Marshal(pub)
	if err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink", Message: "cannot be stored"}
	}
	cfg := sink.Config{Public: public, Destination: Destination(pub)}
	if present {
		if cfg.Credentials, err = json.Marshal(credentials{JSON: key}); err != nil {
			return sink.Config{}, &sink.FieldError{Field: "sink." + credentialsField, Message: "cannot be stored"}
		}
	}
	return cfg, nil
}

// Destination is the circuit-breaker key of a Pub/Sub sink
// (docs/concepts.md, Circuit breaker): the endpoint and the topic's
// resource name. It never includes credentials.
func Destination(pub publicConfig) string {
	return "pubsub://" + endpointOrDefault(pub.Endpoint) + "/" + topicName(pub)
}

func endpointOrDefault(endpoint string) string {
	if endpoint == "" {
		return defaultEndpoint
	}
	return endpoint
}

// topicName is the topic's full resource name, which the client takes as
// it is, whatever project the client was made for.
func topicName(pub publicConfig) string {
	return "projects/" + pub.Project + "/topics/" + pub.Topic
}

// CheckProject accepts a Google Cloud project id: lowercase letters,
// digits and hyphens, starting with a letter, optionally after a domain
// and a colon (the old domain-scoped ids, example.com:my-project).
func CheckProject(project string) error {
	if len(project) > maxProjectLength {
		return fmt.Errorf("must be at most %d characters", maxProjectLength)
	}
	id := project
	if domain, rest, scoped := strings.Cut(project, ":"); scoped {
		if domain == "" || strings.ContainsFunc(domain, func(r rune) bool { return !isLower(r) && !isDigit(r) && r != '-' && r != '.' }) {
			return errors.New("must be a project id, such as my-project (a domain-scoped id is example.com:my-project)")
		}
		id = rest
	}
	if id == "" || !isLower(rune(id[0])) || strings.HasSuffix(id, "-") ||
		strings.ContainsFunc(id, func(r rune) bool { return !isLower(r) && !isDigit(r) && r != '-' }) {
		return errors.New("must be a project id: lowercase letters, digits and hyphens, starting with a letter, such as my-project")
	}
	return nil
}

// CheckTopic accepts a Pub/Sub topic id as Pub/Sub does: 3 to 255
// characters, letters, digits and - _ . ~ + %, starting with a letter and
// not with "goog".
func CheckTopic(topic string) error {
	switch {
	case len(topic) < minTopicLength || len(topic) > maxTopicLength:
		return fmt.Errorf("must be %d to %d characters", minTopicLength, maxTopicLength)
	case !isLetter(rune(topic[0])):
		return errors.New("must start with a letter")
	case strings.HasPrefix(strings.ToLower(topic), "goog"):
		return errors.New(`must not start with "goog", which Pub/Sub reserves`)
	case strings.ContainsFunc(topic, func(r rune) bool { return !isLetter(r) && !isDigit(r) && !strings.ContainsRune("-_.~+%", r) }):
		return errors.New("may hold only letters, digits and - _ . ~ + %")
	}
	return nil
}

// CheckEndpoint accepts a gRPC endpoint, host:port, and returns it with
// the host lowercased. A literal IP address is judged by the outbound
// address policy at once (unless allowPrivate), so an obviously
// unreachable endpoint is refused when it is configured; host names are
// judged when they are dialled, as every sink's destinations are. Its
// errors never quote the endpoint.
func CheckEndpoint(endpoint string, allowPrivate bool) (string, error) {
	if len(endpoint) > MaxEndpointLength {
		return "", fmt.Errorf("must be at most %d characters", MaxEndpointLength)
	}
	if strings.Contains(endpoint, "://") || strings.ContainsAny(endpoint, "/?#@") {
		return "", errors.New("must be host:port, such as localhost:8085 for an emulator or a private endpoint's host:443, without a scheme or path")
	}
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil || host == "" {
		return "", errors.New("must be host:port, such as localhost:8085 for an emulator or a private endpoint's host:443")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", errors.New("port must be between 1 and 65535")
	}
	host = strings.ToLower(host)
	if ip, err := netip.ParseAddr(host); err == nil {
		if !allowPrivate {
			if err := netguard.Allowed(ip); err != nil {
				return "", err
			}
		}
		host = ip.String()
	} else {
		host = strings.TrimSuffix(host, ".")
		if host == "" || strings.ContainsFunc(host, func(r rune) bool { return !isLower(r) && !isDigit(r) && r != '-' && r != '.' }) {
			return "", errors.New("host must be a DNS name or an IP address")
		}
	}
	return net.JoinHostPort(host, port), nil
}

// serviceAccountKey is what the hub reads of a key before the client
// library does: enough to refuse what is not a usable service-account key.
type serviceAccountKey struct {
	Type        string `json:"type"`
	ClientEmail string `json:"client_email"`
	PrivateKey  string `json:"private_key"`
	TokenURI    string `json:"token_uri"`
}

// CheckServiceAccountKey accepts the content of a service-account key file
// (type service_account). Other credential files are refused: an external
// account or a user's refresh token would have the hub run a command or
// reach an address the file names. The token URI must be Google's. Its
// errors never quote the key.
func CheckServiceAccountKey(key string) error {
	if len(key) > MaxCredentialsBytes {
		return fmt.Errorf("must be at most %d bytes", MaxCredentialsBytes)
	}
	var k serviceAccountKey
	if err := json.Unmarshal([]byte(key), &k); err != nil {
		return errors.New("must be the content of a service-account key file (JSON), as a string")
	}
	switch {
	case k.Type != "service_account":
		return errors.New(`must be a service-account key ("type": "service_account"); other credential types are not accepted`)
	case k.ClientEmail == "" || k.PrivateKey == "":
		return errors.New("must hold the key's client_email and private_key")
	case k.TokenURI != "" && k.TokenURI != googleTokenURI:
		return fmt.Errorf("token_uri must be %s", googleTokenURI)
	}
	return nil
}

func isLower(r rune) bool  { return r >= 'a' && r <= 'z' }
func isLetter(r rune) bool { return isLower(r) || r >= 'A' && r <= 'Z' }
func isDigit(r rune) bool  { return r >= '0' && r <= '9' }

func requiredString(fields map[string]json.RawMessage, name string) (string, error) {
	s, present, err := optionalString(fields, name)
	if err != nil {
		return "", err
	}
	if !present {
		return "", &sink.FieldError{Field: "sink." + name, Message: "is required"}
	}
	return s, nil
}

// optionalString reads a string field; null and "" are absent.
func optionalString(fields map[string]json.RawMessage, name string) (string, bool, error) {
	raw, present := fields[name]
	if !present || string(raw) == "null" {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, &sink.FieldError{Field: "sink." + name, Message: "must be a string"}
	}
	if !utf8.ValidString(s) {
		return "", false, &sink.FieldError{Field: "sink." + name, Message: "must be valid UTF-8"}
	}
	return s, s != "", nil
}

// clientKey identifies one endpoint and credential version: sinks with
// the same key share a client. The key is kept as a hash: the cache must
// tell a rotated key from the old one, and need not hold it a second time.
type clientKey struct {
	endpoint string
	keyHash  [32]byte
}

// Open builds the sink of one subscription from its stored configuration
// with Credentials decrypted. It connects to nothing: the first attempt
// does. Sinks of the same endpoint and key share a client until the last
// of them is closed. signingSecrets are ignored.
func (t *Type) Open(cfg sink.Config, _ []string) (sink.Sink, error) {
	var pub publicConfig
	if err := json.Unmarshal(cfg.Public, &pub); err != nil {
		return nil, errors.New("pubsub sink: stored configuration is not a JSON object with project and topic")
	}
	if err := CheckProject(pub.Project); err != nil {
		return nil, fmt.Errorf("pubsub sink: stored project: %w", err)
	}
	if err := CheckTopic(pub.Topic); err != nil {
		return nil, fmt.Errorf("pubsub sink: stored topic: %w", err)
	}
	if pub.Endpoint != "" {
		if _, err := CheckEndpoint(pub.Endpoint, true); err != nil {
			return nil, fmt.Errorf("pubsub sink: stored endpoint: %w", err)
		}
	}
	var creds credentials
	if len(cfg.Credentials) > 0 {
		// The decoder's message could quote part of the key.
		if err := json.Unmarshal(cfg.Credentials, &creds); err != nil {
			return nil, errors.New("pubsub sink: stored credentials are not a JSON object")
		}
	}
	if creds.JSON == "" && pub.Endpoint == "" {
		return nil, errors.New("pubsub sink: stored configuration has neither credentials nor an endpoint")
	}
	key := clientKey{endpoint: pub.Endpoint, keyHash: sha256.Sum256([]byte(creds.JSON))}
	c := t.acquire(key, pub.Project, creds.JSON)
	return newTopicSink(t, c, pub), nil
}

// acquire returns the shared client of a key, counting one more sink on it.
func (t *Type) acquire(key clientKey, project, serviceAccountKey string) *client {
	return t.clients.Acquire(key, func() *client {
		return &client{key: key, project: project, serviceAccountKey: serviceAccountKey, dialer: t.dialer}
	})
}

// release counts one sink less on c and closes it when none is left.
func (t *Type) release(c *client) {
	if t.clients.Release(c.key) {
		c.close()
	}
}
