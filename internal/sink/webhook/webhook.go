// Package webhook is the webhook sink (docs/consuming.md, What a delivery looks like): one signed HTTP POST per
// attempt, to a URL the tenant chose, through a dialer that refuses private
// and reserved addresses after DNS.
//
// A Type owns one http.Transport that every subscription's sink shares, so
// deliveries to one receiver reuse kept-alive connections however many
// subscriptions point at it, and Open is cheap enough to call per attempt.
package webhook

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hubctl/hubctl/internal/buildinfo"
	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

// Name is the sink.type of webhook subscriptions.
const Name = "webhook"

const (
	// MaxURLLength bounds the stored URL; real webhook URLs are far shorter.
	MaxURLLength = 2048
)

// Options are what every webhook sink of one hub shares.
type Options struct {
	// AllowPrivate lets deliveries reach loopback, private and reserved
	// addresses (STREAMING_HUB_ALLOW_PRIVATE_SINKS).
	AllowPrivate bool
	// UserAgent of every request; "" means buildinfo.UserAgent().
	UserAgent string
	// Resolver answers host lookups at dial time; nil means the system's.
	Resolver netguard.Resolver
	// Dial connects to one already-checked IP address; nil means a
	// net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// RootCAs verifies receivers' certificates; nil means the system pool.
	RootCAs *x509.CertPool
	// Now stamps X-Webhook-Timestamp; nil means time.Now.
	Now func() time.Time
}

// Type is the webhook sink type. It is safe for concurrent use.
type Type struct {
	allowPrivate bool
	userAgent    string
	now          func() time.Time
	transport    *http.Transport
	client       *http.Client

	// Clients with a sink's own authorities or certificate, and token
	// caches, by credential version (auth.go).
	cacheMu    sync.Mutex
	tlsClients map[[32]byte]*http.Client
	tokens     map[[32]byte]*tokenCache
}

var _ sink.Type = (*Type)(nil)

// NewType builds the webhook sink type and its shared transport.
func NewType(opts Options) *Type {
	dialer := &netguard.Dialer{AllowPrivate: opts.AllowPrivate, Resolver: opts.Resolver, Dial: opts.Dial}
	transport := sink.NewTransport(sink.TransportOptions{
		Dial: dialer.DialContext,
		// Never a proxy from the environment: the proxy would make the
		// connection to the receiver, out of the dialer's sight.
		Proxy:   nil,
		RootCAs: opts.RootCAs,
	})
	// Without an Accept-Encoding of our own, the request carries exactly the
	// delivery headers (docs/consuming.md) and the response snippet is what the receiver
	// wrote.
	transport.DisableCompression = true
	t := &Type{
		allowPrivate: opts.AllowPrivate,
		userAgent:    opts.UserAgent,
		now:          opts.Now,
		transport:    transport,
		client: &http.Client{
			Transport: transport,
			// A 3xx is the receiver's answer, recorded as a failure: a
			// redirect would send a signed event somewhere nobody verified.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		tlsClients: make(map[[32]byte]*http.Client),
		tokens:     make(map[[32]byte]*tokenCache),
	}
	if t.userAgent == "" {
		t.userAgent = buildinfo.UserAgent()
	}
	if t.now == nil {
		t.now = time.Now
	}
	return t
}

// Name returns "webhook".
func (t *Type) Name() string { return Name }

// CloseIdleConnections closes the kept-alive connections of every sink of
// this type; call it at shutdown.
func (t *Type) CloseIdleConnections() {
	t.transport.CloseIdleConnections()
	t.cacheMu.Lock()
	defer t.cacheMu.Unlock()
	for _, c := range t.tlsClients {
		c.CloseIdleConnections()
	}
}

// publicConfig is the stored, shown configuration of a webhook sink.
type publicConfig struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Auth    *publicAuth       `json:"auth,omitempty"`
	// CACert is PEM: the authorities trusted for this destination instead
	// of the system's.
	CACert string `json:"ca_cert,omitempty"`
}

// Parse validates {"type":"webhook","url":"…"}, with optional headers and
// auth (extras.go): auth's password or token becomes the credentials. The URL must pass
// netguard.CheckURL; a literal IP address in it must also pass the address
// policy unless private sinks are allowed, so an obviously unreachable
// destination is refused when it is configured rather than at verification.
// Hostnames are judged at dial time only. The URL is stored as given; the
// destination is its normalised scheme://host:port.
func (t *Type) Parse(raw json.RawMessage) (sink.Config, error) {
	fields, err := sink.DecodeObject(raw, Name, "url", "headers", "auth", "ca_cert")
	if err != nil {
		return sink.Config{}, err
	}

	rawURL, present := fields["url"]
	if !present {
		return sink.Config{}, &sink.FieldError{Field: "sink.url", Message: "is required"}
	}
	var target string
	if err := json.Unmarshal(rawURL, &target); err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink.url", Message: "must be a string"}
	}
	if target == "" {
		return sink.Config{}, &sink.FieldError{Field: "sink.url", Message: "is required"}
	}
	u, err := netguard.CheckTarget(target, netguard.TargetRules{MaxLength: MaxURLLength, AllowPrivate: t.allowPrivate})
	if err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink.url", Message: err.Error()}
	}

	cfg := publicConfig{URL: target}
	var creds *authCredentials
	if rawAuth, ok := fields["auth"]; ok {
		if cfg.Auth, creds, err = t.parseAuth(rawAuth); err != nil {
			return sink.Config{}, err
		}
	}
	if rawHeaders, ok := fields["headers"]; ok {
		if cfg.Headers, err = parseHeaders(rawHeaders, setsAuthorization(cfg.Auth)); err != nil {
			return sink.Config{}, err
		}
	}
	if rawCA, ok := fields["ca_cert"]; ok {
		if cfg.CACert, err = parseCACert(rawCA); err != nil {
			return sink.Config{}, err
		}
	}
	public, err := marshalPublic(cfg)
	if err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink.url", Message: "cannot be stored"}
	}
	out := sink.Config{Public: public, Destination: Destination(u)}
	if creds != nil {
		if out.Credentials, err = json.Marshal(creds); err != nil {
			return sink.Config{}, &sink.FieldError{Field: "sink.auth", Message: "cannot be stored"}
		}
	}
	return out, nil
}

// marshalPublic keeps & < > as typed, so a stored URL with a query reads
// back the way the tenant wrote it.
func marshalPublic(c publicConfig) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Destination is the circuit-breaker key of a webhook URL (docs/concepts.md, Circuit breaker):
// scheme://host:port with the scheme's default port filled in, the host
// lowercased without a trailing dot and IP addresses in canonical form, so
// that spellings of one receiver share one breaker. It never includes user
// information, path or query.
func Destination(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.String()
	} else {
		host = strings.TrimSuffix(host, ".")
	}
	port := u.Port()
	if n, err := strconv.Atoi(port); err == nil {
		port = strconv.Itoa(n)
	} else if u.Scheme == "https" {
		port = "443"
	} else {
		port = "80"
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(host, port)
}

// Open builds the sink of one subscription. signingSecrets are its secrets,
// newest first: one, or two during a rotation overlap (docs/concepts.md, Secret rotation). The sink
// holds no connection of its own, so Open is cheap and Close is a no-op.
func (t *Type) Open(cfg sink.Config, signingSecrets []string) (sink.Sink, error) {
	var c publicConfig
	if err := json.Unmarshal(cfg.Public, &c); err != nil {
		return nil, errors.New("webhook sink: stored configuration is not a JSON object with a url")
	}
	if err := netguard.CheckURL(c.URL); err != nil {
		return nil, fmt.Errorf("webhook sink: stored url: %w", err)
	}
	if len(signingSecrets) == 0 || len(signingSecrets) > 2 {
		return nil, fmt.Errorf("webhook sink: want 1 or 2 signing secrets, got %d", len(signingSecrets))
	}
	schemes := []string{cfg.SignatureScheme, cfg.SignatureScheme}
	if cfg.PreviousSignatureScheme != "" {
		schemes[1] = cfg.PreviousSignatureScheme
	}
	var creds authCredentials
	if c.Auth != nil && json.Unmarshal(cfg.Credentials, &creds) != nil {
		return nil, errors.New("webhook sink: stored auth credentials are not a JSON object")
	}
	auth, err := authorization(c.Auth, creds)
	if err != nil {
		return nil, err
	}
	client, err := t.clientFor(c.CACert, c.Auth, creds)
	if err != nil {
		return nil, err
	}
	s := &hookSink{typ: t, client: client, url: c.URL, headers: c.Headers, authorization: auth}
	if c.Auth != nil && c.Auth.Type == AuthClientCredentials {
		s.tokens = t.tokensFor(c.Auth, creds)
	}
	for i, secret := range signingSecrets {
		if secret == "" {
			return nil, errors.New("webhook sink: empty signing secret")
		}
		switch schemes[i] {
		case "", whsign.SchemeLerian:
			s.lerian = append(s.lerian, secret)
		case whsign.SchemeStandardWebhooks:
			if _, err := whsign.DecodeStandardSecret(secret); err != nil {
				return nil, errors.New("webhook sink: a signing secret is not a standard-webhooks secret")
			}
			s.standard = append(s.standard, secret)
		default:
			return nil, fmt.Errorf("webhook sink: unknown signature scheme %q", schemes[i])
		}
	}
	return s, nil
}
