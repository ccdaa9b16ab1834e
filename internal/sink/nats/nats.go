// Package nats is the NATS JetStream sink (docs/concepts.md, Sinks): one
// JetStream publish per attempt to a subject the tenant chose, acknowledged
// by the stream that captures it. The event id travels as Nats-Msg-Id, so
// the stream's duplicate window stores a retried event once.
//
// A Type keeps one NATS connection per server and credential set, shared by
// every subscription's sink that names them. A connection the server closed
// is replaced on the next attempt, never in the background: an idle server
// costs nothing, and a broken one is retried on dispatch's schedule.
package nats

import (
	"context"
	"crypto/sha256"
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

	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
)

// Name is the sink.type of NATS subscriptions.
const Name = "nats"

const (
	// MaxURLLength bounds the stored URL.
	MaxURLLength = 2048
	// MaxSubjectLength bounds the subject; NATS allows more, but a subject
	// longer than this is a mistake, not a naming scheme.
	MaxSubjectLength = 255
	// defaultPort is NATS's client port.
	defaultPort = 4222
)

// Options are what every NATS sink of one hub shares.
type Options struct {
	// AllowPrivate lets sinks reach loopback, private and reserved
	// addresses (STREAMING_HUB_ALLOW_PRIVATE_SINKS).
	AllowPrivate bool
	// Resolver answers host lookups at dial time; nil means the system's.
	Resolver netguard.Resolver
	// Dial connects to one already-checked IP address; nil means a
	// net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// RootCAs verifies tls:// servers' certificates; nil means the system
	// pool.
	RootCAs *x509.CertPool
	// ConnectionName is shown in the server's connection list; "" means
	// "hubctl".
	ConnectionName string
}

// Type is the NATS sink type. It is safe for concurrent use.
type Type struct {
	allowPrivate bool
	dialer       *netguard.Dialer
	rootCAs      *x509.CertPool
	connName     string

	servers sink.Shared[serverKey, *server]
}

var _ sink.Type = (*Type)(nil)

// NewType builds the NATS sink type. It connects to nothing until a sink
// delivers or probes.
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

// Name returns "nats".
func (t *Type) Name() string { return Name }

// publicConfig is the stored, shown configuration.
type publicConfig struct {
	URL     string `json:"url"`
	Subject string `json:"subject"`
	// Credentials holds the user name of a user-and-password login: it
	// names who signs in, and is shown like a webhook's basic-auth user.
	Credentials *publicCredentials `json:"credentials,omitempty"`
}

type publicCredentials struct {
	Username string `json:"username,omitempty"`
}

// credentials is what Config.Credentials holds: exactly one of the three.
type credentials struct {
	Token    string `json:"token,omitempty"`
	Password string `json:"password,omitempty"`
	// Creds is a NATS credentials file's content: a user JWT and its
	// nkey seed.
	Creds string `json:"creds,omitempty"`
}

// The secret field of each kind of login, in sink.credentials and in the
// stored credentials.
const (
	tokenField    = "token"
	passwordField = "password"
	credsField    = "creds"
)

// Parse validates {"type":"nats","url":"nats://…"|"tls://…","subject":"…",
// "credentials":{"token"}|{"username","password"}|{"creds"}?}. Public keeps
// the URL, subject and user name; the token, password or credentials file
// are Credentials. Destination is scheme://host:port/subject.
func (t *Type) Parse(raw json.RawMessage) (sink.Config, error) {
	fields, err := sink.DecodeObject(raw, Name, "credentials", "subject", "url")
	if err != nil {
		return sink.Config{}, err
	}
	target, err := requiredString(fields, "url")
	if err != nil {
		return sink.Config{}, err
	}
	server, err := parseServerURL(target)
	if err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink.url", Message: err.Error()}
	}
	if ip, err := netip.ParseAddr(server.Hostname()); err == nil && !t.allowPrivate {
		if err := netguard.Allowed(ip); err != nil {
			return sink.Config{}, &sink.FieldError{Field: "sink.url", Message: err.Error()}
		}
	}
	subject, err := requiredString(fields, "subject")
	if err != nil {
		return sink.Config{}, err
	}
	if err := checkSubject(subject); err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink.subject", Message: err.Error()}
	}
	pub := publicConfig{URL: server.String(), Subject: subject}
	var creds *credentials
	if rawCreds, present := fields["credentials"]; present && string(rawCreds) != "null" {
		var username string
		if username, creds, err = parseCredentials(rawCreds); err != nil {
			return sink.Config{}, err
		}
		if username != "" {
			pub.Credentials = &publicCredentials{Username: username}
		}
	}
	public, err := json.Marshal(pub)
	if err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink", Message: "cannot be stored"}
	}
	cfg := sink.Config{Public: public, Destination: Destination(server, subject)}
	if creds != nil {
		if cfg.Credentials, err = json.Marshal(creds); err != nil {
			return sink.Config{}, &sink.FieldError{Field: "sink.credentials", Message: "cannot be stored"}
		}
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

// parseServerURL checks a NATS server URL and returns it with the default
// port made explicit. Credentials in the URL are refused rather than
// split off: sink.credentials is the one place they are given, so reads
// have one place to mask. Its errors never quote the URL.
func parseServerURL(target string) (*url.URL, error) {
	if len(target) > MaxURLLength {
		return nil, fmt.Errorf("must be at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, errors.New("not a valid URL, such as nats://nats.example.com:4222")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "nats" && scheme != "tls" {
		return nil, errors.New("scheme must be nats or tls (one server; a cluster announces the others)")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return nil, errors.New("must name the server's host, as nats://host:port")
	}
	if u.User != nil {
		return nil, errors.New("must not carry a user or password: give them in sink.credentials")
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, errors.New("must be only scheme://host:port, without a path, query or fragment")
	}
	port := defaultPort
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, errors.New("port must be between 1 and 65535")
		}
		port = n
	}
	host := strings.ToLower(u.Hostname())
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.String()
	} else {
		host = strings.TrimSuffix(host, ".")
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port))}, nil
}

// checkSubject accepts a subject a message can be published to: tokens
// separated by dots, none empty, no wildcards (a publish names one
// subject), no whitespace or control characters, and not one of the
// server's own "$" subjects (its JetStream and system APIs).
func checkSubject(subject string) error {
	switch {
	case len(subject) > MaxSubjectLength:
		return fmt.Errorf("must be at most %d bytes", MaxSubjectLength)
	case !utf8.ValidString(subject):
		return errors.New("must be valid UTF-8")
	case strings.ContainsFunc(subject, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return errors.New("must not contain spaces or control characters")
	case strings.HasPrefix(subject, "$"):
		return errors.New("must not be one of the server's own $ subjects")
	}
	for token := range strings.SplitSeq(subject, ".") {
		switch token {
		case "":
			return errors.New("must be dot-separated tokens, none empty, as orders.created")
		case "*", ">":
			return errors.New("must not contain wildcards (* or >): deliveries publish to one subject")
		}
	}
	return nil
}

// credentialShapes is what sink.credentials may be, for error messages.
const credentialShapes = `must be {"token"}, {"username", "password"} or {"creds"} (a NATS credentials file's content)`

const (
	// maxSecretBytes bounds a token or password.
	maxSecretBytes = 4096
	// maxUsernameBytes bounds a user name.
	maxUsernameBytes = 256
	// MaxCredsBytes bounds a credentials file: a JWT and a seed, with
	// their decorations, are a few kilobytes.
	MaxCredsBytes = 16 << 10
)

// parseCredentials checks sink.credentials. Its errors never quote a value.
func parseCredentials(raw json.RawMessage) (string, *credentials, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return "", nil, &sink.FieldError{Field: "sink.credentials", Message: credentialShapes}
	}
	text := func(name string, limit int) (string, error) {
		var v string
		if err := json.Unmarshal(fields[name], &v); err != nil || v == "" {
			return "", &sink.FieldError{Field: "sink.credentials." + name, Message: "is required, a non-empty string"}
		}
		if len(v) > limit {
			return "", &sink.FieldError{Field: "sink.credentials." + name, Message: fmt.Sprintf("must be at most %d bytes", limit)}
		}
		return v, nil
	}
	only := func(names ...string) error {
		if len(fields) != len(names) {
			return &sink.FieldError{Field: "sink.credentials", Message: credentialShapes}
		}
		for _, name := range names {
			if _, ok := fields[name]; !ok {
				return &sink.FieldError{Field: "sink.credentials", Message: credentialShapes}
			}
		}
		return nil
	}
	switch {
	case only(tokenField) == nil:
		token, err := text(tokenField, maxSecretBytes)
		if err != nil {
			return "", nil, err
		}
		if strings.ContainsFunc(token, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
			return "", nil, &sink.FieldError{Field: "sink.credentials.token", Message: "must not contain spaces or control characters"}
		}
		return "", &credentials{Token: token}, nil
	case only("username", passwordField) == nil:
		username, err := text("username", maxUsernameBytes)
		if err != nil {
			return "", nil, err
		}
		if strings.ContainsFunc(username, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
			return "", nil, &sink.FieldError{Field: "sink.credentials.username", Message: "must not contain spaces or control characters"}
		}
		password, err := text(passwordField, maxSecretBytes)
		if err != nil {
			return "", nil, err
		}
		if strings.ContainsFunc(password, unicode.IsControl) {
			return "", nil, &sink.FieldError{Field: "sink.credentials.password", Message: "must not contain control characters"}
		}
		return username, &credentials{Password: password}, nil
	case only(credsField) == nil:
		creds, err := text(credsField, MaxCredsBytes)
		if err != nil {
			return "", nil, err
		}
		if _, _, err := userJWTAndSeed(creds); err != nil {
			return "", nil, &sink.FieldError{Field: "sink.credentials.creds", Message: err.Error()}
		}
		return "", &credentials{Creds: creds}, nil
	}
	return "", nil, &sink.FieldError{Field: "sink.credentials", Message: credentialShapes}
}

// Destination is the circuit-breaker key of a NATS sink (docs/concepts.md,
// Circuit breaker): scheme://host:port/subject, from a URL parseServerURL
// returned. It never includes credentials.
func Destination(server *url.URL, subject string) string {
	return server.Scheme + "://" + server.Host + "/" + subject
}

// serverKey identifies one login at one server: sinks with the same key
// share a connection. The secret is kept as a hash: the key must tell a
// rotated secret from the old one, and need not hold it a second time.
type serverKey struct {
	url        string
	username   string
	secretHash [32]byte
}

// Open builds the sink of one subscription from its stored configuration
// with Credentials decrypted. It connects to nothing: the first attempt
// does. Sinks of the same server and login share its connection until the
// last of them is closed. signingSecrets are ignored.
func (t *Type) Open(cfg sink.Config, _ []string) (sink.Sink, error) {
	var pub publicConfig
	if err := json.Unmarshal(cfg.Public, &pub); err != nil {
		return nil, errors.New("nats sink: stored configuration is not a JSON object with url and subject")
	}
	server, err := parseServerURL(pub.URL)
	if err != nil {
		return nil, fmt.Errorf("nats sink: stored url: %w", err)
	}
	if err := checkSubject(pub.Subject); err != nil {
		return nil, fmt.Errorf("nats sink: stored subject: %w", err)
	}
	var creds credentials
	if len(cfg.Credentials) > 0 {
		// The decoder's message could quote part of the secret.
		if err := json.Unmarshal(cfg.Credentials, &creds); err != nil {
			return nil, errors.New("nats sink: stored credentials are not a JSON object")
		}
	}
	login := login{credentials: creds}
	if pub.Credentials != nil {
		login.username = pub.Credentials.Username
	}
	if login.username != "" && creds.Password == "" {
		return nil, errors.New("nats sink: stored credentials have a user name without a password")
	}
	key := serverKey{url: server.String(), username: login.username, secretHash: sha256.Sum256(cfg.Credentials)}
	return &natsSink{typ: t, server: t.acquire(key, server, login), subject: pub.Subject}, nil
}

// acquire returns the shared server connection of a key, counting one more
// sink on it.
func (t *Type) acquire(key serverKey, u *url.URL, l login) *server {
	return t.servers.Acquire(key, func() *server { return newServer(key, u, l, t.connectOptions) })
}

// release counts one sink less on s and closes its connection when none
// is left.
func (t *Type) release(s *server) {
	if t.servers.Release(s.key) {
		s.close()
	}
}
