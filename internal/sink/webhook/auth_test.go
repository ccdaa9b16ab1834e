package webhook

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/testutil/testpki"
)

func TestParseClientCredentialsMTLSAndCA(t *testing.T) {
	typ := newTestType(t, Options{})
	ca := testpki.MustCA(t, "webhook parse CA")
	client := ca.Client(t, "hubctl")
	other := ca.Client(t, "someone else")
	obj := func(extra string) json.RawMessage {
		return json.RawMessage(`{"type":"webhook","url":"https://hooks.example.com/in",` + extra + `}`)
	}

	cfg, err := typ.Parse(obj(`"auth":{"type":"oauth2_client_credentials","token_url":"https://idp.example.com/token","client_id":"hub","client_secret":"cl1ent-secret","scope":"events:write","audience":"https://hooks.example.com"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSONText(cfg.Public, `{"url":"https://hooks.example.com/in","auth":{"type":"oauth2_client_credentials","token_url":"https://idp.example.com/token","client_id":"hub","scope":"events:write","audience":"https://hooks.example.com"}}`) ||
		!sameJSONText(cfg.Credentials, `{"client_secret":"cl1ent-secret"}`) {
		t.Errorf("oauth2 split %s / %s", cfg.Public, cfg.Credentials)
	}

	cfg, err = typ.Parse(obj(`"auth":{"type":"mtls","client_cert":` + jsonString(string(client.CertPEM)) + `,"client_key":` + jsonString(string(client.KeyPEM)) + `},"ca_cert":` + jsonString(string(ca.CertPEM))))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg.Public), "PRIVATE KEY") || !strings.Contains(string(cfg.Credentials), "PRIVATE KEY") ||
		!strings.Contains(string(cfg.Public), `"ca_cert"`) || !strings.Contains(string(cfg.Public), `"client_cert"`) {
		t.Errorf("mtls split %s / (credentials hold a key: %v)", cfg.Public, strings.Contains(string(cfg.Credentials), "PRIVATE KEY"))
	}
	// mTLS sets no Authorization: the tenant's own header stays allowed.
	if _, err := typ.Parse(obj(`"headers":{"Authorization":"ApiKey k"},"auth":{"type":"mtls","client_cert":` + jsonString(string(client.CertPEM)) + `,"client_key":` + jsonString(string(client.KeyPEM)) + `}`)); err != nil {
		t.Errorf("Authorization beside mtls: %v", err)
	}

	for _, tc := range []struct{ name, extra, field string }{
		{"oauth2 without token_url", `"auth":{"type":"oauth2_client_credentials","client_id":"c","client_secret":"s"}`, "sink.auth.token_url"},
		{"oauth2 without secret", `"auth":{"type":"oauth2_client_credentials","token_url":"https://idp.example.com/t","client_id":"c"}`, "sink.auth.client_secret"},
		{"oauth2 token_url not http", `"auth":{"type":"oauth2_client_credentials","token_url":"ftp://idp.example.com/t","client_id":"c","client_secret":"s"}`, "sink.auth.token_url"},
		{"oauth2 token_url private", `"auth":{"type":"oauth2_client_credentials","token_url":"http://10.0.0.7/token","client_id":"c","client_secret":"s"}`, "sink.auth.token_url"},
		{"oauth2 token_url metadata", `"auth":{"type":"oauth2_client_credentials","token_url":"http://169.254.169.254/latest","client_id":"c","client_secret":"s"}`, "sink.auth.token_url"},
		{"oauth2 unknown field", `"auth":{"type":"oauth2_client_credentials","token_url":"https://idp.example.com/t","client_id":"c","client_secret":"s","password":"p"}`, "sink.auth.password"},
		{"mtls without key", `"auth":{"type":"mtls","client_cert":` + jsonString(string(client.CertPEM)) + `}`, "sink.auth.client_key"},
		{"mtls key of another cert", `"auth":{"type":"mtls","client_cert":` + jsonString(string(client.CertPEM)) + `,"client_key":` + jsonString(string(other.KeyPEM)) + `}`, "sink.auth.client_key"},
		{"mtls cert not PEM", `"auth":{"type":"mtls","client_cert":"MIIB...","client_key":` + jsonString(string(client.KeyPEM)) + `}`, "sink.auth.client_cert"},
		{"ca_cert not PEM", `"ca_cert":"not a certificate"`, "sink.ca_cert"},
		{"ca_cert a key", `"ca_cert":` + jsonString(string(client.KeyPEM)), "sink.ca_cert"},
		{"ca_cert too long", `"ca_cert":` + jsonString(strings.Repeat("x", MaxPEMBytes+1)), "sink.ca_cert"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := typ.Parse(obj(tc.extra))
			var fe *sink.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("got %v, want a field error on %s", err, tc.field)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") || strings.Contains(err.Error(), `"s"`) {
				t.Fatalf("the error quotes a credential: %v", err)
			}
		})
	}
}

// tlsReceiver is a loopback HTTPS receiver whose certificate a private CA
// signed, optionally requiring a client certificate of the same CA.
func tlsReceiver(t *testing.T, ca *testpki.CA, requireClientCert bool) (*httptest.Server, *receivedNames) {
	t.Helper()
	names := &receivedNames{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) > 0 {
			names.add(r.TLS.PeerCertificates[0].Subject.CommonName)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, []net.IP{net.IPv4(127, 0, 0, 1)}).TLS}, MinVersion: tls.VersionTLS12}
	if requireClientCert {
		srv.TLS.ClientAuth = tls.RequireAndVerifyClientCert
		srv.TLS.ClientCAs = ca.Pool()
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, names
}

type receivedNames struct {
	mu    sync.Mutex
	names []string
}

func (n *receivedNames) add(name string) { n.mu.Lock(); n.names = append(n.names, name); n.mu.Unlock() }
func (n *receivedNames) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.names...)
}

// parseAndOpen takes a sink object the way a subscription does: Parse,
// then Open of what was stored.
func parseAndOpen(t *testing.T, typ *Type, raw string) sink.Sink {
	t.Helper()
	cfg, err := typ.Parse(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	s, err := typ.Open(cfg, []string{newSecret})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestMTLSAndPrivateCA(t *testing.T) {
	ca := testpki.MustCA(t, "webhook receiver CA")
	srv, names := tlsReceiver(t, ca, true)
	typ := newTestType(t, Options{AllowPrivate: true})
	client := ca.Client(t, "hubctl-delivery")
	mtls := `"auth":{"type":"mtls","client_cert":` + jsonString(string(client.CertPEM)) + `,"client_key":` + jsonString(string(client.KeyPEM)) + `}`
	caCert := `"ca_cert":` + jsonString(string(ca.CertPEM))
	hook := func(extra string) string {
		return `{"type":"webhook","url":"` + srv.URL + `/in"` + extra + `}`
	}

	if out := parseAndOpen(t, typ, hook(","+mtls)).Deliver(t.Context(), testDelivery()); out.OK || !strings.Contains(out.Error, "unknown authority") {
		t.Fatalf("without ca_cert: %+v, want a certificate signed by an unknown authority", out)
	}
	if out := parseAndOpen(t, typ, hook(","+caCert)).Deliver(t.Context(), testDelivery()); out.OK || out.NotSent {
		t.Fatalf("without a client certificate: %+v, want a failure the breaker counts", out)
	}
	s := parseAndOpen(t, typ, hook(","+caCert+","+mtls))
	if out := s.Deliver(t.Context(), testDelivery()); !out.OK {
		t.Fatalf("with ca_cert and the client certificate: %+v", out)
	}
	if err := s.Probe(t.Context(), sink.ProbeRequest{SubscriptionID: "s", TenantID: "acme", Timeout: 5 * time.Second}); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if got := names.all(); len(got) != 2 || got[0] != "hubctl-delivery" {
		t.Fatalf("the receiver saw client certificates %v", got)
	}
	// A sink without ca_cert keeps the system's authorities: the private
	// CA of one destination is trusted for that destination only.
	plain := openSink(t, typ, srv.URL+"/in")
	if out := plain.Deliver(t.Context(), testDelivery()); out.OK {
		t.Fatal("a sink without ca_cert trusted another sink's CA")
	}
}

// tokenEndpoint issues client-credentials tokens and counts the fetches.
type tokenEndpoint struct {
	*httptest.Server
	mu        sync.Mutex
	fetches   int
	audiences []string
	fail      bool
}

func startTokenEndpoint(t *testing.T, clientID, clientSecret string) *tokenEndpoint {
	e := &tokenEndpoint{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		_ = r.ParseForm()
		e.mu.Lock()
		defer e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if e.fail || id != clientID || secret != clientSecret || r.Form.Get("grant_type") != "client_credentials" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client","error_description":"client ` + secret + ` refused"}`))
			return
		}
		e.fetches++
		e.audiences = append(e.audiences, r.Form.Get("audience"))
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("tok-%d", e.fetches), "token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *tokenEndpoint) count() int { e.mu.Lock(); defer e.mu.Unlock(); return e.fetches }

// TestClientCredentials: the token is fetched once and reused; a 401 from
// the receiver fetches a new one and sends once more in the same attempt;
// a token endpoint that refuses fails the attempt with a clear reason
// (counted by the breaker) that quotes nothing it answered.
func TestClientCredentials(t *testing.T) {
	const clientID, clientSecret = "hub", "cl1ent-Secret-value"
	idp := startTokenEndpoint(t, clientID, clientSecret)
	var mu sync.Mutex
	accepted := map[string]bool{}
	var seen []string
	rcv := startReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		seen = append(seen, token)
		if _, known := accepted[token]; !known {
			accepted[token] = true // the first use of a token is accepted
		}
		if !accepted[token] {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	typ := newTestType(t, Options{AllowPrivate: true})
	auth := func(secret string) string {
		return `{"type":"webhook","url":"` + rcv.hookURL() + `","auth":{"type":"oauth2_client_credentials","token_url":"` + idp.URL + `/token","client_id":"` + clientID + `","client_secret":"` + secret + `","audience":"hooks"}}`
	}
	s := parseAndOpen(t, typ, auth(clientSecret))

	for range 2 {
		if out := s.Deliver(t.Context(), testDelivery()); !out.OK {
			t.Fatalf("Deliver: %+v", out)
		}
	}
	if n := idp.count(); n != 1 {
		t.Fatalf("%d token fetches for two deliveries, want 1", n)
	}
	// Another sink of the same credentials shares the token.
	if out := parseAndOpen(t, typ, auth(clientSecret)).Deliver(t.Context(), testDelivery()); !out.OK || idp.count() != 1 {
		t.Fatalf("a second sink of the same credentials: %+v after %d fetches", out, idp.count())
	}

	mu.Lock()
	accepted["tok-1"] = false // revoked at the receiver
	before := len(seen)
	mu.Unlock()
	if out := s.Deliver(t.Context(), testDelivery()); !out.OK {
		t.Fatalf("after the receiver revoked the token: %+v", out)
	}
	mu.Lock()
	retried := append([]string(nil), seen[before:]...)
	mu.Unlock()
	if len(retried) != 2 || retried[0] != "tok-1" || retried[1] != "tok-2" || idp.count() != 2 {
		t.Fatalf("tokens sent in the attempt %v after %d fetches; want tok-1 refused, then tok-2", retried, idp.count())
	}
	if idp.audiences[0] != "hooks" {
		t.Errorf("asked for audience %q", idp.audiences[0])
	}

	bad := parseAndOpen(t, typ, auth("not-the-secret"))
	out := bad.Deliver(t.Context(), testDelivery())
	if out.OK || out.NotSent || !strings.Contains(out.Error, "oauth2 token: the token endpoint answered invalid_client") {
		t.Fatalf("refused client secret: %+v", out)
	}
	if strings.Contains(out.Error, "not-the-secret") {
		t.Fatalf("the error quotes the secret: %s", out.Error)
	}
	if err := bad.Probe(t.Context(), sink.ProbeRequest{SubscriptionID: "s", TenantID: "acme", Timeout: 5 * time.Second}); err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("the probe of a refused client: %v", err)
	}
}

// TestClientCredentialsTokenURLIsGuarded: the token URL is dialled through
// the same address policy as deliveries, so a stored token URL on a
// private address is refused at dial time without connecting.
func TestClientCredentialsTokenURLIsGuarded(t *testing.T) {
	dialled := false
	typ := newTestType(t, Options{Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		dialled = true
		return nil, errors.New("the test dialer never connects")
	}})
	public := json.RawMessage(`{"url":"https://hooks.example.com/in","auth":{"type":"oauth2_client_credentials","token_url":"http://127.0.0.1:9/token","client_id":"c"}}`)
	s, err := typ.Open(sink.Config{Public: public, Credentials: json.RawMessage(`{"client_secret":"s"}`)}, []string{newSecret})
	if err != nil {
		t.Fatal(err)
	}
	out := s.Deliver(t.Context(), testDelivery())
	if out.OK || !strings.Contains(out.Error, "oauth2 token: destination refused") || dialled {
		t.Fatalf("token URL on loopback: %+v (dialled %v)", out, dialled)
	}
}

func TestNewAuthMaskRoundTrip(t *testing.T) {
	typ := newTestType(t, Options{})
	reg, err := sink.NewRegistry(typ)
	if err != nil {
		t.Fatal(err)
	}
	parse := func(raw string, current *sink.Config) (sink.Parsed, error) {
		o, err := reg.Object(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		return o.Parse(current)
	}
	client := testpki.MustCA(t, "mask CA").Client(t, "hub")
	for _, tc := range []struct{ name, auth, secret, field, otherIdentity string }{
		{"oauth2", `{"type":"oauth2_client_credentials","token_url":"https://idp.example.com/t","client_id":"hub","client_secret":"cl1ent-Secret"}`, "cl1ent-Secret", "client_secret", `"client_id":"root"`},
		{"mtls", `{"type":"mtls","client_cert":` + jsonString(string(client.CertPEM)) + `,"client_key":` + jsonString(string(client.KeyPEM)) + `}`, "PRIVATE KEY", "client_key", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := parse(`{"type":"webhook","url":"https://hooks.example.com/in","auth":`+tc.auth+`}`, nil)
			if err != nil {
				t.Fatal(err)
			}
			view, err := reg.Show("webhook", ps.Config.Public, ps.CredentialFields)
			if err != nil {
				t.Fatal(err)
			}
			shown, _ := json.Marshal(view)
			if strings.Contains(string(shown), tc.secret) || !strings.Contains(string(shown), `"`+tc.field+`":"****"`) {
				t.Fatalf("read shows %s", shown)
			}
			current := ps.Config
			back, err := parse(string(shown), &current)
			if err != nil || current.Differs(back.Config) {
				t.Fatalf("a read sent back: %v", err)
			}
			if tc.otherIdentity != "" {
				moved := strings.Replace(string(shown), `"client_id":"hub"`, tc.otherIdentity, 1)
				if _, err := parse(moved, &current); err == nil {
					t.Fatal("the masked secret was kept for another client id")
				}
			}
		})
	}
}
