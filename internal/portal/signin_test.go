package portal_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/portal"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// stubSessions signs in with one good token and refuses every other.
type stubSessions struct{}

func (stubSessions) As(hubapi.Caller) hubapi.ControlPlane { return nil }

func (stubSessions) RedeemPortalLink(_ context.Context, token string) (string, hubapi.Caller, time.Time, error) {
	if token != "hpl_good" {
		return "", hubapi.Caller{}, time.Time{}, hubapi.ErrPortalLinkInvalid
	}
	return "hps_cookie", hubapi.PortalSession("acme", "s1", false), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), nil
}

func (stubSessions) AuthenticatePortal(context.Context, string) (hubapi.Caller, time.Time, error) {
	return hubapi.Caller{}, time.Time{}, hubapi.ErrPortalSessionInvalid
}

func (stubSessions) SignOutPortal(context.Context, string) error { return nil }

func signIn(h http.Handler, token, remote string, secure bool) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/portal/sign-in?token="+token, nil)
	r.RemoteAddr = remote
	if secure {
		r.TLS = &tls.ConnectionState{}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestSignInIsRateLimitedPerAddress(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := portal.New(portal.Options{Sessions: stubSessions{}, Now: func() time.Time { return now }})
	for i := range 10 {
		if w := signIn(h, "hpl_guess", "192.0.2.1:1000", false); w.Code != http.StatusForbidden {
			t.Fatalf("sign-in %d answered %d, want 403 while within the burst", i+1, w.Code)
		}
	}
	if w := signIn(h, "hpl_good", "192.0.2.1:1001", false); w.Code != http.StatusTooManyRequests {
		t.Errorf("the 11th sign-in from one address answered %d, want 429 even with a good token", w.Code)
	}
	if w := signIn(h, "hpl_good", "192.0.2.2:1000", false); w.Code != http.StatusOK {
		t.Errorf("another address answered %d, want 200", w.Code)
	}
	now = now.Add(2 * time.Second)
	if w := signIn(h, "hpl_good", "192.0.2.1:1002", false); w.Code != http.StatusOK {
		t.Errorf("after two seconds the address answered %d, want 200", w.Code)
	}
}

func TestSessionCookieIsSecureUnderTLS(t *testing.T) {
	h := portal.New(portal.Options{Sessions: stubSessions{}})
	for _, secure := range []bool{false, true} {
		cookie := signIn(h, "hpl_good", "192.0.2.1:1000", secure).Header().Get("Set-Cookie")
		if strings.Contains(cookie, "Secure") != secure {
			t.Errorf("under TLS %v the cookie is %q", secure, cookie)
		}
	}
}

func TestFramingFollowsTheSetting(t *testing.T) {
	for _, tc := range []struct {
		ancestors []string
		xfo       string
	}{
		{nil, "DENY"},
		{[]string{"https://app.example.com"}, ""},
	} {
		h := portal.New(portal.Options{Sessions: stubSessions{}, FrameAncestors: tc.ancestors})
		w := signIn(h, "hpl_good", "192.0.2.1:1000", false)
		if got := w.Header().Get("X-Frame-Options"); got != tc.xfo {
			t.Errorf("ancestors %v: X-Frame-Options %q, want %q", tc.ancestors, got, tc.xfo)
		}
		if got := w.Header().Get("Content-Security-Policy"); got != portal.ContentSecurityPolicy(tc.ancestors) {
			t.Errorf("ancestors %v: CSP %q", tc.ancestors, got)
		}
	}
}
