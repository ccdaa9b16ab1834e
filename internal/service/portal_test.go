package service_test

import (
	"context"
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func portalControlPlane(t *testing.T, enabled bool) (*service.ControlPlane, *subsFixture) {
	t.Helper()
	f := newSubsFixture(t, true)
	cp := service.NewControlPlane(f.st.Queue, f.st.Catalog, f.st.Lifecycle, service.ControlPlaneOptions{
		Now:              f.clk.Now,
		Portal:           service.PortalOptions{Enabled: enabled, BaseURL: "https://hub.example/"},
		NewSubscriptions: func() (*service.Subscriptions, func(), error) { return f.svc, nil, nil },
	})
	return cp, f
}

// linkToken reads the token out of a link's URL, as a browser would send it.
func linkToken(t *testing.T, link hubapi.PortalLink) string {
	t.Helper()
	u, err := url.Parse(link.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Scheme + "://" + u.Host + u.Path; got != "https://hub.example"+service.PortalSignInPath {
		t.Errorf("link %s does not land on the public URL's sign-in page", got)
	}
	return u.Query().Get("token")
}

func TestPortalLinkOpensOneSessionThatEndsWithIt(t *testing.T) {
	ctx := context.Background()
	cp, f := portalControlPlane(t, true)
	key, err := cp.As(hubapi.Admin()).CreateAPIKey(ctx, "acme", "portal")
	if err != nil {
		t.Fatal(err)
	}
	holder, err := cp.Authenticate(ctx, key.Key)
	if err != nil {
		t.Fatal(err)
	}
	link, err := cp.As(holder).CreatePortalLink(ctx, "", hubapi.PortalLinkCreate{TTL: "30m", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !link.ReadOnly || !link.ExpiresAt.Equal(f.clk.now.Add(30*time.Minute)) {
		t.Errorf("link %+v, want read-only until 30 minutes from now", link)
	}
	token := linkToken(t, link)

	signIn, err := cp.Portal.Redeem(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	want := hubapi.PortalSession("acme", signIn.Caller.Session, true)
	if signIn.Caller != want || signIn.Caller.Session == "" || !signIn.ExpiresAt.Equal(link.ExpiresAt) {
		t.Errorf("signed in as %+v until %v, want %+v until the link's expiry", signIn.Caller, signIn.ExpiresAt, want)
	}
	if _, err := cp.Portal.Redeem(ctx, token); !errors.Is(err, hubapi.ErrPortalLinkInvalid) {
		t.Errorf("a link used twice: %v, want it refused", err)
	}
	who, _, err := cp.Portal.Authenticate(ctx, signIn.Cookie)
	if err != nil || who != signIn.Caller {
		t.Errorf("the cookie authenticates %+v (%v), want %+v", who, err, signIn.Caller)
	}

	f.clk.now = link.ExpiresAt
	if _, _, err := cp.Portal.Authenticate(ctx, signIn.Cookie); !errors.Is(err, hubapi.ErrPortalSessionInvalid) {
		t.Errorf("the cookie at the link's expiry: %v, want the session over", err)
	}
}

func TestPortalSessionsEndOnDemand(t *testing.T) {
	ctx := context.Background()
	cp, _ := portalControlPlane(t, true)
	admin := cp.As(hubapi.Admin())
	var cookies []string
	for _, tenant := range []string{"acme", "acme", "globex"} {
		link, err := admin.CreatePortalLink(ctx, tenant, hubapi.PortalLinkCreate{})
		if err != nil {
			t.Fatal(err)
		}
		signIn, err := cp.Portal.Redeem(ctx, linkToken(t, link))
		if err != nil {
			t.Fatal(err)
		}
		cookies = append(cookies, signIn.Cookie)
	}
	ended, err := admin.EndPortalSessions(ctx, "acme")
	if err != nil || ended != (hubapi.PortalSessionsEnded{Tenant: "acme", Ended: 2}) {
		t.Fatalf("ended %+v (%v), want acme's two sessions", ended, err)
	}
	for i, live := range []bool{false, false, true} {
		if _, _, err := cp.Portal.Authenticate(ctx, cookies[i]); (err == nil) != live {
			t.Errorf("session %d: %v, want live=%v", i, err, live)
		}
	}
}

func TestTheConsoleLinkSignsTheOperatorIn(t *testing.T) {
	ctx := context.Background()
	cp, _ := portalControlPlane(t, true)
	link, err := cp.As(hubapi.Admin()).CreateConsoleLink(ctx, hubapi.PortalLinkCreate{})
	if err != nil {
		t.Fatal(err)
	}
	signIn, err := cp.Portal.Redeem(ctx, linkToken(t, link))
	if err != nil {
		t.Fatal(err)
	}
	if signIn.Caller.Kind != hubapi.CallerAdmin || signIn.Caller.Session == "" || signIn.Caller.Tenant != "" {
		t.Errorf("the console session is %+v, want the admin with a session", signIn.Caller)
	}
}

func TestPortalLinkRefusals(t *testing.T) {
	ctx := context.Background()
	cp, _ := portalControlPlane(t, true)
	admin := cp.As(hubapi.Admin())
	for _, tc := range []struct {
		name   string
		tenant string
		ttl    string
		code   string
	}{
		{"a missing tenant", "nobody", "", hubapi.CodeTenantNotFound},
		{"no ttl unit", "acme", "30", hubapi.CodeInvalidRequest},
		{"a zero ttl", "acme", "0s", hubapi.CodeInvalidRequest},
		{"a negative ttl", "acme", "-1h", hubapi.CodeInvalidRequest},
		{"a ttl over a week", "acme", "168h1s", hubapi.CodeInvalidRequest},
	} {
		_, err := admin.CreatePortalLink(ctx, tc.tenant, hubapi.PortalLinkCreate{TTL: tc.ttl})
		if got := hubapi.ErrorCode(err); got != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if _, err := admin.CreatePortalLink(ctx, "acme", hubapi.PortalLinkCreate{TTL: "168h"}); err != nil {
		t.Errorf("a week's ttl: %v", err)
	}
	for _, token := range []string{"", "hub_notalink", "hpl_" + strings.Repeat("x", 43), "hpl_" + strings.Repeat("x", 100)} {
		if _, err := cp.Portal.Redeem(ctx, token); !errors.Is(err, hubapi.ErrPortalLinkInvalid) {
			t.Errorf("redeem %q: %v, want it refused", token, err)
		}
	}

	off, _ := portalControlPlane(t, false)
	_, err := off.As(hubapi.Admin()).CreatePortalLink(ctx, "acme", hubapi.PortalLinkCreate{})
	if hubapi.ErrorCode(err) != hubapi.CodePortalDisabled {
		t.Errorf("a link with the portal off: %v, want %s", err, hubapi.CodePortalDisabled)
	}
}

// changingOperations calls, as h, every operation that changes something,
// each with input it would otherwise accept or fail on later than the
// caller check. reading lists those that change nothing.
func changingOperations(sub string) map[string]func(ctx context.Context, h hubapi.ControlPlane) error {
	name := "renamed"
	return map[string]func(ctx context.Context, h hubapi.ControlPlane) error{
		"CreateTenant": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.CreateTenant(ctx, "initech")
			return err
		},
		"SetTenantStatus": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.SetTenantStatus(ctx, "acme", hubapi.TenantInactive)
			return err
		},
		"PurgeTenant": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.PurgeTenant(ctx, "acme")
			return err
		},
		"CreateAPIKey": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.CreateAPIKey(ctx, "acme", "ci")
			return err
		},
		"RevokeAPIKey": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.RevokeAPIKey(ctx, "acme", "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b")
			return err
		},
		"PruneStorage": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.PruneStorage(ctx, false)
			return err
		},
		"CreateConsoleLink": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.CreateConsoleLink(ctx, hubapi.PortalLinkCreate{})
			return err
		},
		"EndPortalSessions": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.EndPortalSessions(ctx, "acme")
			return err
		},
		"CreateSubscription": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.CreateSubscription(ctx, "", webhookInput("https://example.com/hook"))
			return err
		},
		"UpdateSubscription": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.UpdateSubscription(ctx, "", sub, hubapi.SubscriptionUpdate{Name: &name})
			return err
		},
		"DeleteSubscription": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.DeleteSubscription(ctx, "", sub)
			return err
		},
		"EnableSubscription": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.EnableSubscription(ctx, "", sub)
			return err
		},
		"DisableSubscription": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.DisableSubscription(ctx, "", sub)
			return err
		},
		"VerifySubscription": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.VerifySubscription(ctx, "", sub)
			return err
		},
		"RotateSecret": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.RotateSecret(ctx, "", sub, "")
			return err
		},
		"RecoverSubscription": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.RecoverSubscription(ctx, "", sub, hubapi.SubscriptionRecover{Since: "2025-01-01T00:00:00Z"}, nil)
			return err
		},
		"ReplayDeadLetters": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.ReplayDeadLetters(ctx, "", hubapi.DeadLetterReplay{SubscriptionID: sub})
			return err
		},
		"ReadEvents": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.ReadEvents(ctx, "", sub, hubapi.PullParams{})
			return err
		},
		"CreatePortalLink": func(ctx context.Context, h hubapi.ControlPlane) error {
			_, err := h.CreatePortalLink(ctx, "", hubapi.PortalLinkCreate{})
			return err
		},
	}
}

var readingOperations = []string{
	"ListTenants", "GetTenant", "ListAPIKeys", "ListQuarantine", "GetQuarantined", "StorageStatus",
	"ListSubscriptions", "GetSubscription", "ListDeliveries", "GetDelivery", "CountDeliveries", "AttemptLatency", "ListDeadLetters",
	"ListEvents", "GetEvent",
}

// TestEveryOperationIsSortedIntoReadingOrChanging: an operation added to
// the interface must be listed in one of the two before this passes, so
// the read-only test below covers it.
func TestEveryOperationIsSortedIntoReadingOrChanging(t *testing.T) {
	changing := changingOperations("")
	iface := reflect.TypeFor[hubapi.ControlPlane]()
	for i := range iface.NumMethod() {
		name := iface.Method(i).Name
		_, changes := changing[name]
		reads := false
		for _, r := range readingOperations {
			reads = reads || r == name
		}
		if changes == reads {
			t.Errorf("%s: list it in exactly one of changingOperations and readingOperations", name)
		}
	}
}

func TestReadOnlySessionsChangeNothing(t *testing.T) {
	ctx := context.Background()
	cp, f := portalControlPlane(t, true)
	sub, _ := f.create(t, "acme", webhookInput("https://example.com/hook"))
	tenantSession := cp.As(hubapi.PortalSession("acme", "s1", true))
	console := cp.As(hubapi.Caller{Kind: hubapi.CallerAdmin, Session: "s2", ReadOnly: true})

	for op, call := range changingOperations(sub.ID) {
		for who, h := range map[string]hubapi.ControlPlane{"a read-only tenant session": tenantSession, "a read-only console": console} {
			err := call(ctx, h)
			var forbidden *hubapi.ForbiddenError
			if !errors.As(err, &forbidden) {
				t.Errorf("%s, %s: %v, want it refused", who, op, err)
			}
		}
	}
	got, err := tenantSession.GetSubscription(ctx, "", sub.ID)
	if err != nil || got.Name != "orders" || !got.Enabled {
		t.Errorf("after every refusal the subscription is %+v (%v), want it as created", got, err)
	}
	if _, err := tenantSession.CountDeliveries(ctx, "", []string{sub.ID}); err != nil {
		t.Errorf("a read-only session counts deliveries: %v", err)
	}
	if _, err := tenantSession.AttemptLatency(ctx, "", sub.ID); err != nil {
		t.Errorf("a read-only session reads attempt latency: %v", err)
	}
	if _, err := tenantSession.ReplayDeadLetters(ctx, "", hubapi.DeadLetterReplay{SubscriptionID: sub.ID, DryRun: true}); err != nil {
		t.Errorf("a read-only session counts a replay: %v", err)
	}
	if _, err := console.PruneStorage(ctx, true); err != nil {
		t.Errorf("a read-only console runs a prune dry run: %v", err)
	}
}

func TestATenantsSessionOnAnAdminOperationIsToldWhy(t *testing.T) {
	ctx := context.Background()
	cp, f := portalControlPlane(t, true)
	session := cp.As(hubapi.PortalSession("acme", "s1", false))
	_, err := session.ListTenants(ctx, hubapi.ListParams{})
	if hubapi.ErrorCode(err) != hubapi.CodeForbidden || !strings.Contains(err.Error(), "portal session") {
		t.Errorf("a tenant's session lists tenants: %v, want forbidden naming the session", err)
	}
	globex, _ := f.create(t, "globex", webhookInput("https://example.com/other"))
	_, err = session.GetSubscription(ctx, "", globex.ID)
	if hubapi.ErrorCode(err) != service.CodeSubscriptionNotFound {
		t.Errorf("a session reads another tenant's subscription: %v, want it answered like a missing one", err)
	}
}
