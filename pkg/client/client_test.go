package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// recorded is what the fake hub saw of one request.
type recorded struct {
	method, path, rawPath, query, body string
	header                             http.Header
}

// fakeHub answers every request with status and body and records it.
func fakeHub(t *testing.T, status int, body string, header map[string]string) (*httptest.Server, func() recorded) {
	t.Helper()
	var mu sync.Mutex
	var last recorded
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = recorded{r.Method, r.URL.Path, r.URL.EscapedPath(), r.URL.RawQuery, string(raw), r.Header.Clone()}
		mu.Unlock()
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() recorded {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

func TestRequestsSendWhatTheRouteTakes(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name                      string
		call                      func(*Client) error
		method, path, query, body string
	}{
		{"create tenant", func(c *Client) error { _, err := c.CreateTenant(ctx, "acme"); return err },
			"POST", "/admin/tenants", "", `{"id":"acme"}`},
		{"list tenants", func(c *Client) error {
			_, err := c.ListTenants(ctx, hubapi.ListParams{Limit: 5, Cursor: "abc=="})
			return err
		}, "GET", "/admin/tenants", "cursor=abc%3D%3D&limit=5", ""},
		{"list tenants with defaults", func(c *Client) error { _, err := c.ListTenants(ctx, hubapi.ListParams{}); return err },
			"GET", "/admin/tenants", "", ""},
		{"get tenant", func(c *Client) error { _, err := c.GetTenant(ctx, "acme"); return err },
			"GET", "/admin/tenants/acme", "", ""},
		{"set tenant status", func(c *Client) error { _, err := c.SetTenantStatus(ctx, "acme", "inactive"); return err },
			"PATCH", "/admin/tenants/acme", "", `{"status":"inactive"}`},
		{"create key", func(c *Client) error { _, err := c.CreateAPIKey(ctx, "acme", "ci"); return err },
			"POST", "/admin/tenants/acme/keys", "", `{"name":"ci"}`},
		{"list keys", func(c *Client) error { _, err := c.ListAPIKeys(ctx, "acme", hubapi.ListParams{Limit: 2}); return err },
			"GET", "/admin/tenants/acme/keys", "limit=2", ""},
		{"revoke key", func(c *Client) error { _, err := c.RevokeAPIKey(ctx, "acme", "k1"); return err },
			"DELETE", "/admin/tenants/acme/keys/k1", "", ""},
		{"list quarantine", func(c *Client) error {
			_, err := c.ListQuarantine(ctx, hubapi.QuarantineListParams{ListParams: hubapi.ListParams{Limit: 3}, Reason: "missing_id", Topic: "t"})
			return err
		}, "GET", "/admin/quarantine", "limit=3&reason=missing_id&topic=t", ""},
		{"get quarantined record", func(c *Client) error { _, err := c.GetQuarantined(ctx, "42"); return err },
			"GET", "/admin/quarantine/42", "", ""},
		{"create subscription", func(c *Client) error {
			_, err := c.CreateSubscription(ctx, "", hubapi.SubscriptionCreate{Name: "feed", Sink: []byte(`{"type":"pull"}`), EventTypes: []string{"*"}})
			return err
		}, "POST", "/v1/subscriptions", "", `{"name":"feed","sink":{"type":"pull"},"event_types":["*"]}`},
		{"list subscriptions", func(c *Client) error {
			_, err := c.ListSubscriptions(ctx, "", hubapi.ListParams{Cursor: "c"})
			return err
		},
			"GET", "/v1/subscriptions", "cursor=c", ""},
		{"get subscription", func(c *Client) error { _, err := c.GetSubscription(ctx, "", "s1"); return err },
			"GET", "/v1/subscriptions/s1", "", ""},
		{"update subscription", func(c *Client) error {
			_, err := c.UpdateSubscription(ctx, "", "s1", hubapi.SubscriptionUpdate{Origin: hubapi.SetNull[string]()})
			return err
		}, "PATCH", "/v1/subscriptions/s1", "", `{"origin":null}`},
		{"delete subscription", func(c *Client) error { _, err := c.DeleteSubscription(ctx, "", "s1"); return err },
			"DELETE", "/v1/subscriptions/s1", "", ""},
		{"enable", func(c *Client) error { _, err := c.EnableSubscription(ctx, "", "s1"); return err },
			"POST", "/v1/subscriptions/s1/enable", "", ""},
		{"disable", func(c *Client) error { _, err := c.DisableSubscription(ctx, "", "s1"); return err },
			"POST", "/v1/subscriptions/s1/disable", "", ""},
		{"verify", func(c *Client) error { _, err := c.VerifySubscription(ctx, "", "s1"); return err },
			"POST", "/v1/subscriptions/s1/verify", "", ""},
		{"rotate to a generated secret", func(c *Client) error { _, err := c.RotateSecret(ctx, "", "s1", ""); return err },
			"POST", "/v1/subscriptions/s1/rotate-secret", "", `{}`},
		{"rotate to a given secret", func(c *Client) error {
			_, err := c.RotateSecret(ctx, "", "s1", "0123456789abcdefghijklmn")
			return err
		}, "POST", "/v1/subscriptions/s1/rotate-secret", "", `{"signing_secret":"0123456789abcdefghijklmn"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, last := fakeHub(t, http.StatusOK, `{}`, nil)
			c, err := New(srv.URL, WithToken("tok"), WithUserAgent("test-agent/1"))
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.call(c); err != nil {
				t.Fatalf("call: %v", err)
			}
			got := last()
			if got.method != tc.method || got.path != tc.path || got.query != tc.query || got.body != tc.body {
				t.Errorf("sent %s %s?%s %s, want %s %s?%s %s", got.method, got.path, got.query, got.body, tc.method, tc.path, tc.query, tc.body)
			}
			if got.header.Get("Authorization") != "Bearer tok" || got.header.Get("User-Agent") != "test-agent/1" ||
				got.header.Get("Accept") != "application/json" || got.header.Get(HeaderTenantID) != "" {
				t.Errorf("headers %v", got.header)
			}
			if wantType := map[bool]string{true: "application/json", false: ""}[tc.body != ""]; got.header.Get("Content-Type") != wantType {
				t.Errorf("Content-Type %q, want %q", got.header.Get("Content-Type"), wantType)
			}
		})
	}
}

func TestTenantScopeAndBasePath(t *testing.T) {
	srv, last := fakeHub(t, http.StatusOK, `{"items":[],"next_cursor":null}`, nil)
	c, err := New(srv.URL+"/hub/", WithToken("admin"), WithTenant("acme"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListSubscriptions(context.Background(), "", hubapi.ListParams{}); err != nil {
		t.Fatal(err)
	}
	if got := last(); got.path != "/hub/v1/subscriptions" || got.header.Get(HeaderTenantID) != "acme" {
		t.Errorf("sent %s with tenant %q", got.path, got.header.Get(HeaderTenantID))
	}
	if _, err := c.ForTenant("other").GetSubscription(context.Background(), "", "a/b c"); err != nil {
		t.Fatal(err)
	}
	if got := last(); got.rawPath != "/hub/v1/subscriptions/a%2Fb%20c" || got.header.Get(HeaderTenantID) != "other" {
		t.Errorf("sent %s with tenant %q", got.rawPath, got.header.Get(HeaderTenantID))
	}
	// ForTenant leaves the original alone.
	if _, err := c.GetSubscription(context.Background(), "", "s"); err != nil || last().header.Get(HeaderTenantID) != "acme" {
		t.Errorf("original client's tenant changed: %v", err)
	}
	// A call naming its tenant sends that one, and leaves the client's alone.
	if _, err := c.ReadEvents(context.Background(), "globex", "s", hubapi.PullParams{}); err != nil || last().header.Get(HeaderTenantID) != "globex" {
		t.Errorf("a call naming tenant globex: %v", err)
	}
	if _, err := c.GetDelivery(context.Background(), "", "d"); err != nil || last().header.Get(HeaderTenantID) != "acme" {
		t.Errorf("the client's tenant changed after a call naming another: %v", err)
	}
	// A client without a tenant sends none for "".
	bare, err := New(srv.URL, WithToken("key"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.ListEvents(context.Background(), "", hubapi.EventListParams{}); err != nil || last().header.Values(HeaderTenantID) != nil {
		t.Errorf("no tenant named, yet sent %q: %v", last().header.Values(HeaderTenantID), err)
	}
}

func TestIDsThatWouldAddressAnotherResourceAreRefused(t *testing.T) {
	srv, _ := fakeHub(t, http.StatusOK, `{}`, nil)
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", ".", ".."} {
		if _, err := c.GetSubscription(context.Background(), "", id); err == nil {
			t.Errorf("GetSubscription(%q) sent a request", id)
		}
		if _, err := c.GetTenant(context.Background(), id); err == nil {
			t.Errorf("GetTenant(%q) sent a request", id)
		}
	}
}

func TestErrorsCarryStatusBodyAndRetryAfter(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		body       string
		header     map[string]string
		wantCode   string
		wantMsg    string
		wantRetry  time.Duration
		wantDetail any
	}{
		{"not found", 404, `{"code":"subscription_not_found","message":"subscription \"x\" not found"}`, nil,
			"subscription_not_found", `subscription "x" not found`, 0, nil},
		{"validation with field", 400, `{"code":"invalid_request","message":"bad name","details":{"field":"name"}}`, nil,
			"invalid_request", "bad name", 0, "name"},
		{"unavailable with seconds", 503, `{"code":"store_unavailable","message":"retry later"}`, map[string]string{"Retry-After": "5"},
			"store_unavailable", "retry later", 5 * time.Second, nil},
		{"proxy page", 502, `<html>bad gateway</html>`, map[string]string{"Content-Type": "text/html"},
			"", "the hub answered HTTP 502 Bad Gateway with a body that is not a hub error (text/html)", 0, nil},
		{"empty body", 500, ``, nil, "", "the hub answered HTTP 500 Internal Server Error with no body", 0, nil},
		{"JSON that is not an error", 418, `{"teapot":true}`, map[string]string{"Content-Type": "application/json"},
			"", "the hub answered HTTP 418 I'm a teapot with a body that is not a hub error (application/json)", 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := fakeHub(t, tc.status, tc.body, tc.header)
			c, err := New(srv.URL, WithToken("secret-token-value"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetTenant(context.Background(), "acme")
			var apiErr *Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v is not a *client.Error", err)
			}
			if apiErr.StatusCode != tc.status || apiErr.Body.Code != tc.wantCode || apiErr.Body.Message != tc.wantMsg || apiErr.RetryAfter != tc.wantRetry {
				t.Errorf("got %+v", apiErr)
			}
			if apiErr.Error() != tc.wantMsg {
				t.Errorf("Error() = %q, want %q", apiErr.Error(), tc.wantMsg)
			}
			if field := apiErr.Body.Details["field"]; field != tc.wantDetail {
				t.Errorf("details.field = %v, want %v", field, tc.wantDetail)
			}
			var body *hubapi.Error
			if !errors.As(err, &body) || body.Code != tc.wantCode {
				t.Errorf("errors.As(*hubapi.Error) = %+v", body)
			}
			if strings.Contains(err.Error(), "secret-token-value") {
				t.Errorf("the token leaked into %q", err)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"120":                           2 * time.Minute,
		"-3":                            0,
		"soon":                          0,
		"Sun, 01 Jun 2025 12:00:30 GMT": 30 * time.Second,
		"Sun, 01 Jun 2025 11:00:00 GMT": 0,
	}
	for value, want := range cases {
		if got := parseRetryAfter(value, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", value, got, want)
		}
	}
}

func TestTransportErrorsAreWrappedWithoutTheToken(t *testing.T) {
	c, err := New("http://127.0.0.1:1", WithToken("secret-token-value"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListTenants(context.Background(), hubapi.ListParams{})
	var apiErr *Error
	if err == nil || errors.As(err, &apiErr) {
		t.Fatalf("got %v, want a transport error", err)
	}
	if !strings.Contains(err.Error(), "GET /admin/tenants") || strings.Contains(err.Error(), "secret-token-value") {
		t.Errorf("error %q", err)
	}
}

func TestUndecodableSuccessIsAnError(t *testing.T) {
	srv, _ := fakeHub(t, http.StatusOK, `not json`, nil)
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetTenant(context.Background(), "acme"); err == nil || !strings.Contains(err.Error(), "decode") {
		t.Errorf("got %v", err)
	}
}

func TestNewRejectsWhatIsNotAHubURL(t *testing.T) {
	for _, u := range []string{"", "hub.example.com", "ftp://hub", "http://", "https://hub?x=1", "https://hub#top", "http://[::1"} {
		if _, err := New(u); err == nil {
			t.Errorf("New(%q) accepted it", u)
		}
	}
	for _, u := range []string{"http://127.0.0.1:8080", "https://hub.example.com/prefix/"} {
		if _, err := New(u); err != nil {
			t.Errorf("New(%q): %v", u, err)
		}
	}
}
