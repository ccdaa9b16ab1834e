package hub_test

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/testutil/testpki"
	"github.com/hubctl/hubctl/internal/testutil/wait"
)

// identityProvider issues client-credentials tokens of a set lifetime and
// remembers when each was issued.
type identityProvider struct {
	*httptest.Server
	mu       sync.Mutex
	lifetime time.Duration
	issued   []time.Time
}

func (p *identityProvider) setLifetime(d time.Duration) { p.mu.Lock(); p.lifetime = d; p.mu.Unlock() }
func (p *identityProvider) fetches() (n int, last time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.issued) > 0 {
		last = p.issued[len(p.issued)-1]
	}
	return len(p.issued), last
}

// bearerReceiver accepts requests bearing a token the provider issued, and
// answers 401 to the next request once refuseNext is set.
type bearerReceiver struct {
	mu         sync.Mutex
	refuseNext bool
	requests   []string // "<token> <status>"
}

func (r *bearerReceiver) refuseOnce() { r.mu.Lock(); r.refuseNext = true; r.mu.Unlock() }
func (r *bearerReceiver) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

// TestWebhookAuthEndToEnd: OAuth2 client credentials and mTLS with a
// private CA, through serve's dispatch: the token is fetched for the probe
// and reused, a 401 fetches a new one within the same attempt, an expired
// one is replaced before it is sent; the client certificate reaches a
// receiver that requires it; no credential shows on reads.
func TestWebhookAuthEndToEnd(t *testing.T) {
	const clientID, clientSecret = "hubctl-e2e", "e2e-Client-Secret-0123456789"
	idp := &identityProvider{lifetime: time.Hour}
	idp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		w.Header().Set("Content-Type", "application/json")
		if id != clientID || secret != clientSecret {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		idp.mu.Lock()
		idp.issued = append(idp.issued, time.Now())
		token, lifetime := fmt.Sprintf("token-%d", len(idp.issued)), idp.lifetime
		idp.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": int(lifetime.Seconds())})
	}))
	t.Cleanup(idp.Close)

	bearer := &bearerReceiver{}
	oauthRcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		status := http.StatusNoContent
		bearer.mu.Lock()
		if bearer.refuseNext || !strings.HasPrefix(token, "token-") {
			bearer.refuseNext, status = false, http.StatusUnauthorized
		}
		bearer.requests = append(bearer.requests, fmt.Sprintf("%s %d", token, status))
		bearer.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(oauthRcv.Close)

	ca := testpki.MustCA(t, "e2e receiver CA")
	var certMu sync.Mutex
	var clientNames []string
	mtlsRcv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		certMu.Lock()
		clientNames = append(clientNames, r.TLS.PeerCertificates[0].Subject.CommonName)
		certMu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	mtlsRcv.TLS = &tls.Config{
		Certificates: []tls.Certificate{ca.Server(t, []net.IP{net.IPv4(127, 0, 0, 1)}).TLS},
		ClientAuth:   tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool(), MinVersion: tls.VersionTLS12,
	}
	mtlsRcv.StartTLS()
	t.Cleanup(mtlsRcv.Close)
	client := ca.Client(t, "hubctl-e2e-delivery")

	h := startHub(t, postedKey)
	oauthSub := h.subscribe(subscription("oauth", map[string]any{
		"type": "webhook", "url": oauthRcv.URL + "/in",
		"auth": map[string]any{"type": "oauth2_client_credentials", "token_url": idp.URL + "/token", "client_id": clientID, "client_secret": clientSecret},
	}, []string{postedKey}, nil))
	mtlsSub := h.subscribe(subscription("mtls", map[string]any{
		"type": "webhook", "url": mtlsRcv.URL + "/in", "ca_cert": string(ca.CertPEM),
		"auth": map[string]any{"type": "mtls", "client_cert": string(client.CertPEM), "client_key": string(client.KeyPEM)},
	}, []string{postedKey}, nil))
	h.noSecrets(oauthSub, clientSecret)
	h.noSecrets(mtlsSub, strings.TrimSpace(string(client.KeyPEM)))

	// The probe fetched the token; the first event reuses it.
	first := h.produce(postedKey, jsonData)
	succeeded(t, h.settled(oauthSub, 1), first, postedKey)
	succeeded(t, h.settled(mtlsSub, 1), first, postedKey)
	if n, _ := idp.fetches(); n != 1 {
		t.Fatalf("%d token fetches for the probe and one event, want 1", n)
	}
	certMu.Lock()
	if len(clientNames) != 2 || clientNames[1] != "hubctl-e2e-delivery" {
		t.Errorf("the mTLS receiver saw client certificates %v", clientNames)
	}
	certMu.Unlock()

	// A 401: one attempt, two requests, a new token.
	bearer.refuseOnce()
	second := h.produce(postedKey, jsonData)
	succeeded(t, h.settled(oauthSub, 2), second, postedKey)
	seen := bearer.seen()
	if got := seen[len(seen)-2:]; got[0] != "token-1 401" || got[1] != "token-2 204" {
		t.Fatalf("requests of the attempt after a 401: %v; want token-1 refused, then token-2", got)
	}

	// A token that expires: the next attempt fetches before sending.
	idp.setLifetime(11 * time.Second) // valid for 1s past oauth2's 10s margin
	bearer.refuseOnce()
	third := h.produce(postedKey, jsonData)
	succeeded(t, h.settled(oauthSub, 3), third, postedKey)
	_, issued := idp.fetches()
	wait.Poll{Patience: 10 * time.Second}.Until(t, "the token to expire", func() bool { return time.Since(issued) > 1500*time.Millisecond })
	fourth := h.produce(postedKey, jsonData)
	succeeded(t, h.settled(oauthSub, 4), fourth, postedKey)
	seen = bearer.seen()
	if n, _ := idp.fetches(); n != 4 || seen[len(seen)-1] != "token-4 204" {
		t.Fatalf("after expiry: %d fetches, last request %q; want a 4th token sent without a 401", n, seen[len(seen)-1])
	}
}
