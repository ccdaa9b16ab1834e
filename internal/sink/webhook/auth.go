package webhook

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/oauthtoken"
	"github.com/hubctl/hubctl/internal/sink"
)

// Endpoints that want more than a shared secret (docs/api.md, Webhook
// headers and auth): a client-credentials token, a client certificate, a
// private CA. Each is set up once per credential version and shared by the
// sinks that carry it, so a token is fetched once for all the attempts of
// its lifetime and a client certificate's connections are kept alive like
// any other.

// MaxPEMBytes bounds ca_cert, client_cert and client_key: a chain of a few
// certificates is a few KiB.
const MaxPEMBytes = 64 << 10

// maxCached bounds the TLS clients and token caches a Type keeps. Past it
// the caches start again empty: a fleet of distinct credentials costs a
// token fetch or a handshake each, never unbounded memory.
const maxCached = 4096

func (t *Type) parseClientCredentials(fields map[string]json.RawMessage, text func(string, bool) (string, error)) (*publicAuth, *authCredentials, error) {
	pub := &publicAuth{Type: AuthClientCredentials}
	creds := &authCredentials{}
	var err error
	if pub.TokenURL, err = text("token_url", true); err != nil {
		return nil, nil, err
	}
	// The hub calls the token URL itself: the same address rules as the
	// webhook's URL keep it from being pointed inside the hub's network.
	if _, err := netguard.CheckTarget(pub.TokenURL, netguard.TargetRules{MaxLength: MaxURLLength, AllowPrivate: t.allowPrivate}); err != nil {
		return nil, nil, &sink.FieldError{Field: "sink.auth.token_url", Message: err.Error()}
	}
	if pub.ClientID, err = text("client_id", true); err != nil {
		return nil, nil, err
	}
	if creds.ClientSecret, err = text(clientSecretField, true); err != nil {
		return nil, nil, err
	}
	if pub.Scope, err = text("scope", false); err != nil {
		return nil, nil, err
	}
	if pub.Audience, err = text("audience", false); err != nil {
		return nil, nil, err
	}
	return pub, creds, nil
}

func parseMTLS(fields map[string]json.RawMessage) (*publicAuth, *authCredentials, error) {
	cert, err := pemField(fields, "sink.auth.client_cert")
	if err != nil {
		return nil, nil, err
	}
	key, err := pemField(fields, "sink.auth.client_key")
	if err != nil {
		return nil, nil, err
	}
	if _, err := tls.X509KeyPair([]byte(cert), []byte(key)); err != nil {
		// The parser's message names no key material.
		return nil, nil, &sink.FieldError{Field: "sink.auth.client_key", Message: "must be the PEM private key of client_cert: " + err.Error()}
	}
	return &publicAuth{Type: AuthMTLS, ClientCert: cert}, &authCredentials{ClientKey: key}, nil
}

// parseCACert checks sink.ca_cert: PEM certificates of the authorities
// trusted for this destination instead of the system's.
func parseCACert(raw json.RawMessage) (string, error) {
	value, err := pemField(map[string]json.RawMessage{"ca_cert": raw}, "sink.ca_cert")
	if err != nil {
		return "", err
	}
	if !x509.NewCertPool().AppendCertsFromPEM([]byte(value)) {
		return "", &sink.FieldError{Field: "sink.ca_cert", Message: "must hold at least one PEM certificate"}
	}
	return value, nil
}

// pemField is a non-empty PEM text of at most MaxPEMBytes.
func pemField(fields map[string]json.RawMessage, field string) (string, error) {
	var v string
	name := field[strings.LastIndexByte(field, '.')+1:]
	if err := json.Unmarshal(fields[name], &v); err != nil || v == "" {
		return "", &sink.FieldError{Field: field, Message: "is required, PEM text"}
	}
	if len(v) > MaxPEMBytes {
		return "", &sink.FieldError{Field: field, Message: "at most 64 KiB of PEM text"}
	}
	if block, _ := pem.Decode([]byte(v)); block == nil {
		return "", &sink.FieldError{Field: field, Message: "must be PEM text (-----BEGIN …-----)"}
	}
	return v, nil
}

// clientFor is the HTTP client of a sink: the shared one, or one with the
// sink's own authorities and client certificate.
func (t *Type) clientFor(caCert string, pub *publicAuth, creds authCredentials) (*http.Client, error) {
	if caCert == "" && (pub == nil || pub.Type != AuthMTLS) {
		return t.client, nil
	}
	h := sha256.New()
	for _, part := range []string{caCert, clientCertOf(pub), creds.ClientKey} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	key := [sha256.Size]byte(h.Sum(nil))

	t.cacheMu.Lock()
	defer t.cacheMu.Unlock()
	if c, ok := t.tlsClients[key]; ok {
		return c, nil
	}
	tlsConfig := t.transport.TLSClientConfig.Clone()
	if caCert != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(caCert)) {
			return nil, errors.New("webhook sink: stored ca_cert holds no certificate")
		}
		tlsConfig.RootCAs = pool
	}
	if pub != nil && pub.Type == AuthMTLS {
		pair, err := tls.X509KeyPair([]byte(pub.ClientCert), []byte(creds.ClientKey))
		if err != nil {
			return nil, errors.New("webhook sink: stored client certificate and key do not match")
		}
		tlsConfig.Certificates = []tls.Certificate{pair}
	}
	transport := t.transport.Clone()
	transport.TLSClientConfig = tlsConfig
	client := &http.Client{Transport: transport, CheckRedirect: t.client.CheckRedirect}
	if len(t.tlsClients) >= maxCached {
		for _, old := range t.tlsClients {
			old.CloseIdleConnections()
		}
		clear(t.tlsClients)
	}
	t.tlsClients[key] = client
	return client, nil
}

func clientCertOf(pub *publicAuth) string {
	if pub == nil {
		return ""
	}
	return pub.ClientCert
}

// tokenCache holds the current token of one client-credentials identity.
// Fetches are serialised, so the workers of a subscription that find no
// token wait for one fetch rather than each making their own.
type tokenCache struct {
	config clientcredentials.Config
	client *http.Client

	mu    sync.Mutex
	token *oauth2.Token
}

// tokensFor is the token cache of an auth's identity and credential.
func (t *Type) tokensFor(pub *publicAuth, creds authCredentials) *tokenCache {
	h := sha256.New()
	for _, part := range []string{pub.TokenURL, pub.ClientID, creds.ClientSecret, pub.Scope, pub.Audience} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	key := [sha256.Size]byte(h.Sum(nil))
	t.cacheMu.Lock()
	defer t.cacheMu.Unlock()
	if c, ok := t.tokens[key]; ok {
		return c
	}
	c := &tokenCache{
		config: clientcredentials.Config{
			ClientID:     pub.ClientID,
			ClientSecret: creds.ClientSecret,
			TokenURL:     pub.TokenURL,
			Scopes:       strings.Fields(pub.Scope),
		},
		// The shared client: the netguard dialer checks the token URL's
		// addresses at dial time, and redirects are refused.
		client: t.client,
	}
	if pub.Audience != "" {
		c.config.EndpointParams = url.Values{"audience": {pub.Audience}}
	}
	if len(t.tokens) >= maxCached {
		clear(t.tokens)
	}
	t.tokens[key] = c
	return c
}

// get is a token valid for a while yet (oauth2's expiry margin), fetched
// when there is none.
func (c *tokenCache) get(ctx context.Context) (*oauth2.Token, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token.Valid() {
		return c.token, nil
	}
	token, err := c.config.Token(context.WithValue(ctx, oauth2.HTTPClient, c.client))
	if err != nil {
		return nil, oauthtoken.Redact(err)
	}
	c.token = token
	return token, nil
}

// refused drops a token the receiver answered 401 to, unless another
// attempt already replaced it.
func (c *tokenCache) refused(token *oauth2.Token) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == token {
		c.token = nil
	}
}
