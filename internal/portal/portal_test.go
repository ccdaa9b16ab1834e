package portal_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/portal"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/testutil/hubtest"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const testKEK = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// hub is a hub assembled as serve assembles it, with tenants acme and
// globex and a pull subscription each.
type hub struct {
	t         *testing.T
	control   *service.ControlPlane
	dsn       string
	url       string
	acmeSub   string
	globexSub string
}

func startHub(t *testing.T) *hub {
	t.Helper()
	dsn := pgtest.DSN(t)
	control, serverURL := hubtest.Start(t, dsn, map[string]string{
		"STREAMING_HUB_POSTGRES_DSN": dsn,
		"STREAMING_HUB_ENV":          "local",
		"STREAMING_HUB_DEV_KEK":      testKEK,
		// The form tests name destinations on loopback, where nothing
		// listens: no traffic leaves the machine.
		"STREAMING_HUB_ALLOW_PRIVATE_SINKS": "true",
	})
	h := &hub{t: t, control: control, dsn: dsn, url: serverURL}
	admin := control.As(hubapi.Admin())
	ctx := context.Background()
	for _, tenant := range []string{"acme", "globex"} {
		if _, err := admin.CreateTenant(ctx, tenant); err != nil {
			t.Fatal(err)
		}
		sub, err := admin.CreateSubscription(ctx, tenant, hubapi.SubscriptionCreate{
			Name: tenant + " feed", Sink: []byte(`{"type":"pull"}`), EventTypes: []string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		if tenant == "acme" {
			h.acmeSub = sub.ID
		} else {
			h.globexSub = sub.ID
		}
	}
	return h
}

func (h *hub) link(tenant string, readOnly bool) string {
	h.t.Helper()
	link, err := h.control.As(hubapi.Admin()).CreatePortalLink(context.Background(), tenant, hubapi.PortalLinkCreate{ReadOnly: readOnly})
	if err != nil {
		h.t.Fatal(err)
	}
	return link.URL
}

// browser is an HTTP client with a cookie jar, as a browser keeps one.
func browser(t testing.TB) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type answer struct {
	status int
	header http.Header
	body   string
}

func get(t *testing.T, c *http.Client, u string) answer {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	return read(t, resp)
}

func post(t *testing.T, c *http.Client, u string, form url.Values) answer {
	t.Helper()
	resp, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	return read(t, resp)
}

func read(t *testing.T, resp *http.Response) answer {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, string(body)}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, page answer) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("no CSRF token on the page:\n%s", page.body)
	}
	return m[1]
}

func TestSignInOpensASessionOnceAndTheTokenDies(t *testing.T) {
	h := startHub(t)
	c := browser(t)
	link := h.link("acme", false)

	signIn := get(t, c, link)
	if signIn.status != http.StatusOK || !strings.Contains(signIn.body, `http-equiv="refresh" content="0; url=/portal/"`) {
		t.Fatalf("sign-in answered %d:\n%s", signIn.status, signIn.body)
	}
	cookie := signIn.header.Get("Set-Cookie")
	for _, want := range []string{portal.CookieName + "=hps_", "Path=/portal/", "HttpOnly", "SameSite=Strict"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("session cookie %q lacks %s", cookie, want)
		}
	}
	home := get(t, c, h.url+"/portal/")
	if home.status != http.StatusOK || !strings.Contains(home.body, "acme feed") || strings.Contains(home.body, "globex feed") {
		t.Fatalf("home answered %d:\n%s", home.status, home.body)
	}
	for name, want := range map[string]string{
		"Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
		"Content-Security-Policy": portal.ContentSecurityPolicy(nil),
	} {
		if got := home.header.Get(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}

	again := get(t, browser(t), link)
	if again.status != http.StatusForbidden || !strings.Contains(again.body, "not valid") {
		t.Errorf("the link opened again answered %d:\n%s", again.status, again.body)
	}
	if signedOut := get(t, browser(t), h.url+"/portal/"); signedOut.status != http.StatusUnauthorized {
		t.Errorf("the portal without a session answered %d", signedOut.status)
	}

	out := post(t, c, h.url+"/portal/sign-out", url.Values{"csrf": {csrfOf(t, home)}})
	if out.status != http.StatusOK {
		t.Fatalf("sign-out answered %d", out.status)
	}
	if after := get(t, c, h.url+"/portal/"); after.status != http.StatusUnauthorized {
		t.Errorf("after signing out the portal answered %d", after.status)
	}
}

func TestAnotherTenantsSubscriptionLooksMissing(t *testing.T) {
	h := startHub(t)
	c := browser(t)
	get(t, c, h.link("acme", false))

	const missing = "01a22ee5-dfa6-7445-9895-d5a93ef514a0"
	for _, path := range []string{"/portal/subscriptions/%s", "/portal/subscriptions/%s/deliveries", "/portal/subscriptions/%s/deliveries?since=1h"} {
		other := get(t, c, h.url+strings.Replace(path, "%s", h.globexSub, 1))
		gone := get(t, c, h.url+strings.Replace(path, "%s", missing, 1))
		if other.status != http.StatusNotFound || other.status != gone.status ||
			strings.ReplaceAll(other.body, h.globexSub, "ID") != strings.ReplaceAll(gone.body, missing, "ID") {
			t.Errorf("%s: another tenant's answered %d, a missing one %d; want the same 404 page\n%s\n%s", path, other.status, gone.status, other.body, gone.body)
		}
	}
	own := get(t, c, h.url+"/portal/subscriptions/"+h.acmeSub)
	if own.status != http.StatusOK || !strings.Contains(own.body, "acme feed") {
		t.Errorf("its own subscription answered %d", own.status)
	}
}

func TestReadOnlySessionFindsNoChangeAndIsRefusedOne(t *testing.T) {
	h := startHub(t)
	c := browser(t)
	get(t, c, h.link("acme", true))

	page := get(t, c, h.url+"/portal/subscriptions/"+h.acmeSub)
	if page.status != http.StatusOK {
		t.Fatalf("the subscription answered %d", page.status)
	}
	forms := regexp.MustCompile(`<form method="post" action="([^"]+)"`).FindAllStringSubmatch(page.body, -1)
	if len(forms) != 1 || forms[0][1] != "/portal/sign-out" {
		t.Errorf("a read-only page has forms %v, want only sign-out", forms)
	}
	refused := post(t, c, h.url+"/portal/subscriptions/"+h.acmeSub+"/disable", url.Values{"csrf": {csrfOf(t, page)}})
	if refused.status != http.StatusForbidden || !strings.Contains(refused.body, "read-only") {
		t.Errorf("a read-only session's disable answered %d:\n%s", refused.status, refused.body)
	}
	sub, err := h.control.As(hubapi.Admin()).GetSubscription(context.Background(), "acme", h.acmeSub)
	if err != nil || !sub.Enabled {
		t.Errorf("after the refusal the subscription is %+v (%v), want it enabled", sub, err)
	}
}

func TestChangesNeedTheSessionsCSRFToken(t *testing.T) {
	h := startHub(t)
	c := browser(t)
	get(t, c, h.link("acme", false))
	for _, form := range []url.Values{{}, {"csrf": {"forged"}}} {
		if got := post(t, c, h.url+"/portal/subscriptions/"+h.acmeSub+"/disable", form); got.status != http.StatusForbidden {
			t.Errorf("a disable with csrf %q answered %d", form.Get("csrf"), got.status)
		}
	}
	page := get(t, c, h.url+"/portal/subscriptions/"+h.acmeSub)
	if got := post(t, c, h.url+"/portal/subscriptions/"+h.acmeSub+"/disable", url.Values{"csrf": {csrfOf(t, page)}}); got.status != http.StatusSeeOther {
		t.Errorf("a disable with the token answered %d:\n%s", got.status, got.body)
	}
	sub, err := h.control.As(hubapi.Admin()).GetSubscription(context.Background(), "acme", h.acmeSub)
	if err != nil || sub.Enabled {
		t.Errorf("after the disable the subscription is %+v (%v)", sub, err)
	}
}

func TestContentSecurityPolicy(t *testing.T) {
	for _, tc := range []struct {
		ancestors []string
		want      string
	}{
		{nil, "frame-ancestors 'none'"},
		{[]string{"https://app.example.com", "https://b.example.com:8443"}, "frame-ancestors https://app.example.com https://b.example.com:8443"},
	} {
		csp := portal.ContentSecurityPolicy(tc.ancestors)
		if !strings.HasSuffix(csp, tc.want) || !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe") {
			t.Errorf("%v: %q", tc.ancestors, csp)
		}
	}
}

func TestTurnedOffThePortalIsNotServed(t *testing.T) {
	dsn := pgtest.DSN(t)
	control, serverURL := hubtest.Start(t, dsn, map[string]string{
		"STREAMING_HUB_POSTGRES_DSN":   dsn,
		"STREAMING_HUB_ENV":            "local",
		"STREAMING_HUB_DEV_KEK":        testKEK,
		"STREAMING_HUB_PORTAL_ENABLED": "false",
	})
	if got := get(t, browser(t), serverURL+"/portal/sign-in?token=hpl_x"); got.status != http.StatusNotFound {
		t.Errorf("the sign-in page of a hub with the portal off answered %d, want 404", got.status)
	}
	admin := control.As(hubapi.Admin())
	if _, err := admin.CreateTenant(context.Background(), "acme"); err != nil {
		t.Fatal(err)
	}
	_, err := admin.CreatePortalLink(context.Background(), "acme", hubapi.PortalLinkCreate{})
	if hubapi.ErrorCode(err) != hubapi.CodePortalDisabled {
		t.Errorf("a link of a hub with the portal off: %v, want %s", err, hubapi.CodePortalDisabled)
	}
}
