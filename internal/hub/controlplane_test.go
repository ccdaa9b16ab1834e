package hub_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/testutil/hubtest"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/pkg/client"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// The contract test: every operation of hubapi.ControlPlane, by the admin
// and by tenant API keys, across tenants included, run in process
// (service's ControlPlane.As) and over HTTP (pkg/client against the API
// `hubctl serve` assembles), each on a database of its own. Both must
// answer every case with the same code and the same result.

// Callers of the contract cases.
const (
	asAdmin  = "admin"
	asAcme   = "acme key"
	asGlobex = "globex key"
)

const contractAdminToken = "contract-admin-token-0123456789abcdef"

// contractFixture is what every case starts from: tenants acme and globex,
// each with an API key and a pull subscription.
type contractFixture struct {
	tokens     map[string]string // caller → bearer token
	acmeSub    string
	globexSub  string
	acmeKeyID  string
	newestSeen string // the name of the subscription the last case created
}

// contractCase is one call through the interface. run answers a summary
// of the result that does not depend on ids or times, which differ
// between the two databases.
type contractCase struct {
	name   string
	op     string // the hubapi.ControlPlane method it exercises
	caller string
	run    func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error)
	want   string // the error code, "" for success
}

// outcome is what a case answered in one mode.
type outcome struct{ summary, code string }

func contractCases() []contractCase {
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	until := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	names := func(subs []hubapi.Subscription) string {
		out := make([]string, len(subs))
		for i, s := range subs {
			out[i] = s.Name
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	return []contractCase{
		// Tenants, as the admin.
		{"create a tenant", "CreateTenant", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			t, err := h.CreateTenant(ctx, "initech")
			return t.ID + " " + t.Status, err
		}, ""},
		{"create a tenant twice", "CreateTenant", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.CreateTenant(ctx, "initech")
			return "", err
		}, "tenant_already_exists"},
		{"create a tenant with a malformed id", "CreateTenant", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.CreateTenant(ctx, "no spaces")
			return "", err
		}, "invalid_request"},
		{"list tenants", "ListTenants", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			page, err := h.ListTenants(ctx, hubapi.ListParams{Limit: 2})
			ids := []string{}
			for _, t := range page.Items {
				ids = append(ids, t.ID)
			}
			return fmt.Sprintf("%v more=%v", ids, page.NextCursor != nil), err
		}, ""},
		{"get a tenant", "GetTenant", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			t, err := h.GetTenant(ctx, "acme")
			return t.ID, err
		}, ""},
		{"get a missing tenant", "GetTenant", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.GetTenant(ctx, "nobody")
			return "", err
		}, "tenant_not_found"},
		{"deactivate a tenant", "SetTenantStatus", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			t, err := h.SetTenantStatus(ctx, "initech", hubapi.TenantInactive)
			return t.Status, err
		}, ""},
		{"a tenant key creates a tenant", "CreateTenant", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.CreateTenant(ctx, "rogue")
			return "", err
		}, "forbidden"},
		{"a tenant key lists tenants", "ListTenants", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.ListTenants(ctx, hubapi.ListParams{})
			return "", err
		}, "forbidden"},
		{"a tenant key reads its own tenant on the admin API", "GetTenant", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.GetTenant(ctx, "acme")
			return "", err
		}, "forbidden"},
		{"a tenant key changes a tenant's status", "SetTenantStatus", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.SetTenantStatus(ctx, "globex", hubapi.TenantInactive)
			return "", err
		}, "forbidden"},

		// API keys.
		{"create a key", "CreateAPIKey", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			k, err := h.CreateAPIKey(ctx, "acme", "ci")
			return fmt.Sprintf("%s token=%v", k.Name, strings.HasPrefix(k.Key, crypto.APITokenPrefix)), err
		}, ""},
		{"create a key of a missing tenant", "CreateAPIKey", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.CreateAPIKey(ctx, "nobody", "ci")
			return "", err
		}, "tenant_not_found"},
		{"list keys", "ListAPIKeys", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			page, err := h.ListAPIKeys(ctx, "acme", hubapi.ListParams{})
			return fmt.Sprint(len(page.Items)), err
		}, ""},
		{"revoke a key under another tenant", "RevokeAPIKey", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.RevokeAPIKey(ctx, "globex", fx.acmeKeyID)
			return "", err
		}, "api_key_not_found"},
		{"a tenant key creates a key", "CreateAPIKey", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.CreateAPIKey(ctx, "acme", "more")
			return "", err
		}, "forbidden"},
		{"a tenant key lists keys", "ListAPIKeys", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.ListAPIKeys(ctx, "acme", hubapi.ListParams{})
			return "", err
		}, "forbidden"},
		{"a tenant key revokes a key", "RevokeAPIKey", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.RevokeAPIKey(ctx, "acme", fx.acmeKeyID)
			return "", err
		}, "forbidden"},

		// Quarantine and storage.
		{"list the quarantine", "ListQuarantine", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			page, err := h.ListQuarantine(ctx, hubapi.QuarantineListParams{Reason: "invalid_time"})
			return fmt.Sprint(len(page.Items)), err
		}, ""},
		{"get a missing quarantined record", "GetQuarantined", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.GetQuarantined(ctx, "42")
			return "", err
		}, "quarantine_not_found"},
		{"a tenant key lists the quarantine", "ListQuarantine", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.ListQuarantine(ctx, hubapi.QuarantineListParams{})
			return "", err
		}, "forbidden"},
		{"a tenant key reads a quarantined record", "GetQuarantined", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.GetQuarantined(ctx, "42")
			return "", err
		}, "forbidden"},
		{"storage status", "StorageStatus", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			st, err := h.StorageStatus(ctx)
			return fmt.Sprint(len(st.Tables) > 0), err
		}, ""},
		{"prune, dry run", "PruneStorage", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			res, err := h.PruneStorage(ctx, true)
			return fmt.Sprint(res.DryRun), err
		}, ""},
		{"a tenant key reads the storage status", "StorageStatus", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.StorageStatus(ctx)
			return "", err
		}, "forbidden"},
		{"a tenant key prunes", "PruneStorage", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.PruneStorage(ctx, true)
			return "", err
		}, "forbidden"},

		// Portal sign-in links and sessions.
		{"a key creates a portal link", "CreatePortalLink", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			link, err := h.CreatePortalLink(ctx, "", hubapi.PortalLinkCreate{TTL: "2h", ReadOnly: true})
			return fmt.Sprintf("sign-in=%v read_only=%v", strings.Contains(link.URL, "/portal/sign-in?token=hpl_"), link.ReadOnly), err
		}, ""},
		{"a key creates a portal link for another tenant", "CreatePortalLink", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.CreatePortalLink(ctx, "globex", hubapi.PortalLinkCreate{})
			return "", err
		}, "forbidden"},
		{"the admin creates a tenant's portal link", "CreatePortalLink", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			link, err := h.CreatePortalLink(ctx, "globex", hubapi.PortalLinkCreate{})
			return fmt.Sprintf("read_only=%v", link.ReadOnly), err
		}, ""},
		{"the admin creates a missing tenant's portal link", "CreatePortalLink", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.CreatePortalLink(ctx, "nobody", hubapi.PortalLinkCreate{})
			return "", err
		}, "tenant_not_found"},
		{"a portal link that outlives a week", "CreatePortalLink", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.CreatePortalLink(ctx, "", hubapi.PortalLinkCreate{TTL: "169h"})
			return "", err
		}, "invalid_request"},
		{"the admin creates a console link", "CreateConsoleLink", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			link, err := h.CreateConsoleLink(ctx, hubapi.PortalLinkCreate{TTL: "30m"})
			return fmt.Sprintf("sign-in=%v", strings.Contains(link.URL, "/portal/sign-in?token=hpl_")), err
		}, ""},
		{"a tenant key creates a console link", "CreateConsoleLink", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.CreateConsoleLink(ctx, hubapi.PortalLinkCreate{})
			return "", err
		}, "forbidden"},
		{"end a tenant's portal sessions", "EndPortalSessions", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			ended, err := h.EndPortalSessions(ctx, "acme")
			return fmt.Sprintf("%s ended=%d", ended.Tenant, ended.Ended), err
		}, ""},
		{"end a missing tenant's portal sessions", "EndPortalSessions", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.EndPortalSessions(ctx, "nobody")
			return "", err
		}, "tenant_not_found"},
		{"a tenant key ends portal sessions", "EndPortalSessions", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.EndPortalSessions(ctx, "acme")
			return "", err
		}, "forbidden"},

		// Subscriptions: a key on its own tenant, the admin on a named one.
		{"a key creates a subscription", "CreateSubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			created, err := h.CreateSubscription(ctx, "", pullSubscription("second"))
			fx.newestSeen = created.ID
			return created.Name + " " + created.TenantID + " " + created.VerificationState, err
		}, ""},
		{"a key names its own tenant", "ListSubscriptions", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			page, err := h.ListSubscriptions(ctx, "acme", hubapi.ListParams{})
			return names(page.Items), err
		}, ""},
		{"a key lists its own tenant's subscriptions only", "ListSubscriptions", asGlobex, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			page, err := h.ListSubscriptions(ctx, "", hubapi.ListParams{})
			return names(page.Items), err
		}, ""},
		{"a key names another tenant", "ListSubscriptions", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.ListSubscriptions(ctx, "globex", hubapi.ListParams{})
			return "", err
		}, "forbidden"},
		{"a key creates in another tenant", "CreateSubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.CreateSubscription(ctx, "globex", pullSubscription("intruder"))
			return "", err
		}, "forbidden"},
		{"the admin names no tenant", "ListSubscriptions", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.ListSubscriptions(ctx, "", hubapi.ListParams{})
			return "", err
		}, "invalid_request"},
		{"the admin names a missing tenant", "ListSubscriptions", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.ListSubscriptions(ctx, "nobody", hubapi.ListParams{})
			return "", err
		}, "tenant_not_found"},
		{"the admin creates in a missing tenant", "CreateSubscription", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.CreateSubscription(ctx, "nobody", pullSubscription("orphan"))
			return "", err
		}, "tenant_not_found"},
		{"the admin acts on an inactive tenant", "ListSubscriptions", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			page, err := h.ListSubscriptions(ctx, "initech", hubapi.ListParams{})
			return fmt.Sprint(len(page.Items)), err
		}, ""},
		{"the admin reads a tenant's subscription", "GetSubscription", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			s, err := h.GetSubscription(ctx, "acme", fx.acmeSub)
			return s.Name, err
		}, ""},
		{"the admin reads it under another tenant", "GetSubscription", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.GetSubscription(ctx, "globex", fx.acmeSub)
			return "", err
		}, "subscription_not_found"},
		{"a key reads another tenant's subscription", "GetSubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.GetSubscription(ctx, "", fx.globexSub)
			return "", err
		}, "subscription_not_found"},
		{"a key updates its subscription", "UpdateSubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			name := "renamed"
			u, err := h.UpdateSubscription(ctx, "", fx.acmeSub, hubapi.SubscriptionUpdate{Name: &name})
			return u.Name, err
		}, ""},
		{"a key updates another tenant's subscription", "UpdateSubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			name := "hijacked"
			_, err := h.UpdateSubscription(ctx, "", fx.globexSub, hubapi.SubscriptionUpdate{Name: &name})
			return "", err
		}, "subscription_not_found"},
		{"an update with an invalid field", "UpdateSubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			ordering := "sideways"
			_, err := h.UpdateSubscription(ctx, "", fx.acmeSub, hubapi.SubscriptionUpdate{Ordering: &ordering})
			return "", err
		}, "invalid_request"},
		{"an update emptying event_types", "UpdateSubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.UpdateSubscription(ctx, "", fx.acmeSub, hubapi.SubscriptionUpdate{EventTypes: []string{}})
			return "", err
		}, "invalid_request"},
		{"disable", "DisableSubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			s, err := h.DisableSubscription(ctx, "", fx.acmeSub)
			return fmt.Sprint(s.Enabled), err
		}, ""},
		{"recover a pull subscription", "RecoverSubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.RecoverSubscription(ctx, "", fx.acmeSub, hubapi.SubscriptionRecover{Since: since, Until: until, DryRun: true}, nil)
			return "", err
		}, "not_a_push_subscription"},
		{"recover without since", "RecoverSubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.RecoverSubscription(ctx, "", fx.acmeSub, hubapi.SubscriptionRecover{}, nil)
			return "", err
		}, "invalid_request"},
		{"recover another tenant's subscription", "RecoverSubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.RecoverSubscription(ctx, "", fx.globexSub, hubapi.SubscriptionRecover{Since: since, Until: until, DryRun: true}, nil)
			return "", err
		}, "subscription_not_found"},
		{"enable", "EnableSubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			s, err := h.EnableSubscription(ctx, "", fx.acmeSub)
			return fmt.Sprint(s.Enabled), err
		}, ""},
		{"enable another tenant's subscription", "EnableSubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.EnableSubscription(ctx, "", fx.globexSub)
			return "", err
		}, "subscription_not_found"},
		{"disable another tenant's subscription", "DisableSubscription", asGlobex, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.DisableSubscription(ctx, "", fx.acmeSub)
			return "", err
		}, "subscription_not_found"},
		{"verify", "VerifySubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			s, err := h.VerifySubscription(ctx, "", fx.acmeSub)
			return s.VerificationState, err
		}, ""},
		{"verify another tenant's subscription", "VerifySubscription", asGlobex, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.VerifySubscription(ctx, "", fx.acmeSub)
			return "", err
		}, "subscription_not_found"},
		{"rotate a pull subscription's secret", "RotateSecret", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.RotateSecret(ctx, "", fx.acmeSub, "")
			return "", err
		}, "not_a_webhook_subscription"},
		{"rotate another tenant's secret", "RotateSecret", asGlobex, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.RotateSecret(ctx, "", fx.acmeSub, "")
			return "", err
		}, "subscription_not_found"},

		// Deliveries, dead letters, the inbox and pull reads.
		{"list deliveries", "ListDeliveries", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			page, err := h.ListDeliveries(ctx, "", fx.acmeSub, hubapi.DeliveryListParams{State: "dead"})
			return fmt.Sprint(len(page.Items)), err
		}, ""},
		{"list another tenant's deliveries", "ListDeliveries", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.ListDeliveries(ctx, "", fx.globexSub, hubapi.DeliveryListParams{})
			return "", err
		}, "subscription_not_found"},
		{"list deliveries created in a window", "ListDeliveries", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			page, err := h.ListDeliveries(ctx, "", fx.acmeSub, hubapi.DeliveryListParams{Since: "2020-01-01T00:00:00Z", Until: "2020-01-02T00:00:00Z"})
			return fmt.Sprint(len(page.Items)), err
		}, ""},
		{"list another tenant's deliveries in a window", "ListDeliveries", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.ListDeliveries(ctx, "", fx.globexSub, hubapi.DeliveryListParams{Since: "2020-01-01T00:00:00Z"})
			return "", err
		}, "subscription_not_found"},
		{"list deliveries since a time that is not RFC 3339", "ListDeliveries", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.ListDeliveries(ctx, "", fx.acmeSub, hubapi.DeliveryListParams{Since: "yesterday"})
			return "", err
		}, "invalid_request"},
		{"list deliveries until before since", "ListDeliveries", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.ListDeliveries(ctx, "", fx.acmeSub, hubapi.DeliveryListParams{Since: "2026-12-02T00:00:00Z", Until: "2026-12-01T00:00:00Z"})
			return "", err
		}, "invalid_request"},
		{"list deliveries in an unknown state", "ListDeliveries", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.ListDeliveries(ctx, "", fx.acmeSub, hubapi.DeliveryListParams{State: "lost"})
			return "", err
		}, "invalid_request"},
		{"count deliveries", "CountDeliveries", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			counts, err := h.CountDeliveries(ctx, "", []string{fx.acmeSub})
			if err != nil {
				return "", err
			}
			c := counts.Items[0]
			return fmt.Sprint(len(counts.Items), c.Delivered, c.Failed, c.Dead, c.Sampled, c.SubscriptionID == fx.acmeSub), nil
		}, ""},
		{"the admin counts a tenant's deliveries", "CountDeliveries", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			counts, err := h.CountDeliveries(ctx, "acme", []string{fx.acmeSub})
			return fmt.Sprint(len(counts.Items)), err
		}, ""},
		{"count another tenant's deliveries", "CountDeliveries", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.CountDeliveries(ctx, "", []string{fx.acmeSub, fx.globexSub})
			return "", err
		}, "subscription_not_found"},
		{"count deliveries of no subscription", "CountDeliveries", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.CountDeliveries(ctx, "", nil)
			return "", err
		}, "invalid_request"},
		{"count a subscription's deliveries twice", "CountDeliveries", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.CountDeliveries(ctx, "", []string{fx.acmeSub, fx.acmeSub})
			return "", err
		}, "invalid_request"},
		{"a subscription's attempt latency", "AttemptLatency", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			latency, err := h.AttemptLatency(ctx, "", fx.acmeSub)
			return fmt.Sprint(len(latency.Hours), latency.Sampled, latency.Hours[23].Start.Equal(latency.Since.Add(23*time.Hour))), err
		}, ""},
		{"another tenant's attempt latency", "AttemptLatency", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.AttemptLatency(ctx, "", fx.globexSub)
			return "", err
		}, "subscription_not_found"},
		{"the attempt latency of an id that is not a UUID", "AttemptLatency", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.AttemptLatency(ctx, "", "orders")
			return "", err
		}, "subscription_not_found"},
		{"get a missing delivery", "GetDelivery", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.GetDelivery(ctx, "", fx.acmeSub)
			return "", err
		}, "delivery_not_found"},
		{"the admin gets a delivery in a missing tenant", "GetDelivery", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.GetDelivery(ctx, "nobody", fx.acmeSub)
			return "", err
		}, "tenant_not_found"},
		{"list dead letters", "ListDeadLetters", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			page, err := h.ListDeadLetters(ctx, "", hubapi.DeadLetterListParams{DeadLetterFilter: hubapi.DeadLetterFilter{SubscriptionID: fx.acmeSub, Since: since}})
			return fmt.Sprint(len(page.Items)), err
		}, ""},
		{"list dead letters of another tenant", "ListDeadLetters", asGlobex, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.ListDeadLetters(ctx, "acme", hubapi.DeadLetterListParams{})
			return "", err
		}, "forbidden"},
		{"replay dead letters, dry run", "ReplayDeadLetters", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			res, err := h.ReplayDeadLetters(ctx, "", hubapi.DeadLetterReplay{SubscriptionID: fx.globexSub, DryRun: true})
			return fmt.Sprintf("matched=%d", res.Matched), err
		}, ""},
		{"replay with a malformed reason", "ReplayDeadLetters", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.ReplayDeadLetters(ctx, "", hubapi.DeadLetterReplay{Reason: "bored", DryRun: true})
			return "", err
		}, "invalid_request"},
		{"search the inbox", "ListEvents", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			page, err := h.ListEvents(ctx, "", hubapi.EventListParams{EventFilter: hubapi.EventFilter{Type: "transaction.posted", Since: since}})
			return fmt.Sprint(len(page.Items)), err
		}, ""},
		{"the admin searches a missing tenant's inbox", "ListEvents", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.ListEvents(ctx, "nobody", hubapi.EventListParams{})
			return "", err
		}, "tenant_not_found"},
		{"get a missing event", "GetEvent", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.GetEvent(ctx, "", "evt-1")
			return "", err
		}, "event_not_found"},
		{"get an event of another tenant", "GetEvent", asAcme, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.GetEvent(ctx, "globex", "evt-1")
			return "", err
		}, "forbidden"},
		{"read a pull subscription", "ReadEvents", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			page, err := h.ReadEvents(ctx, "", fx.acmeSub, hubapi.PullParams{Limit: 10})
			return fmt.Sprintf("%d more=%v", len(page.Items), page.NextCursor != nil), err
		}, ""},
		{"the admin reads a tenant's pull subscription", "ReadEvents", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			page, err := h.ReadEvents(ctx, "globex", fx.globexSub, hubapi.PullParams{})
			return fmt.Sprint(len(page.Items)), err
		}, ""},
		{"read another tenant's pull subscription", "ReadEvents", asGlobex, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.ReadEvents(ctx, "", fx.acmeSub, hubapi.PullParams{})
			return "", err
		}, "subscription_not_found"},

		// Deleting, revoking and purging last: they take what the cases
		// above use.
		{"delete another tenant's subscription", "DeleteSubscription", asGlobex, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.DeleteSubscription(ctx, "", fx.acmeSub)
			return "", err
		}, "subscription_not_found"},
		{"delete a subscription", "DeleteSubscription", asAcme, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			d, err := h.DeleteSubscription(ctx, "", fx.newestSeen)
			return fmt.Sprintf("canceled=%d same id=%v", d.CanceledJobs, d.ID == fx.newestSeen), err
		}, ""},
		{"revoke a key", "RevokeAPIKey", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			k, err := h.RevokeAPIKey(ctx, "acme", fx.acmeKeyID)
			return fmt.Sprint(k.RevokedAt != nil), err
		}, ""},
		{"a tenant key purges a tenant", "PurgeTenant", asGlobex, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.PurgeTenant(ctx, "globex")
			return "", err
		}, "forbidden"},
		{"purge a tenant", "PurgeTenant", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			res, err := h.PurgeTenant(ctx, "globex")
			return res.Tenant, err
		}, ""},
		{"the purged tenant is gone", "GetTenant", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, _ *contractFixture) (string, error) {
			_, err := h.GetTenant(ctx, "globex")
			return "", err
		}, "tenant_not_found"},
		{"the admin acts on the purged tenant", "GetSubscription", asAdmin, func(ctx context.Context, h hubapi.ControlPlane, fx *contractFixture) (string, error) {
			_, err := h.GetSubscription(ctx, "globex", fx.globexSub)
			return "", err
		}, "tenant_not_found"},
	}
}

func pullSubscription(name string) hubapi.SubscriptionCreate {
	return hubapi.SubscriptionCreate{Name: name, Sink: []byte(`{"type":"pull"}`), EventTypes: []string{"*"}}
}

// TestContractCasesCoverEveryOperation: an operation added to the
// interface needs a case here before this passes.
func TestContractCasesCoverEveryOperation(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range contractCases() {
		covered[c.op] = true
	}
	iface := reflect.TypeFor[hubapi.ControlPlane]()
	for i := range iface.NumMethod() {
		if name := iface.Method(i).Name; !covered[name] {
			t.Errorf("no contract case calls %s", name)
		}
	}
	for op := range covered {
		if _, ok := iface.MethodByName(op); !ok {
			t.Errorf("a contract case names %s, which hubapi.ControlPlane does not have", op)
		}
	}
}

// TestControlPlaneContract runs every case in process and over HTTP.
func TestControlPlaneContract(t *testing.T) {
	cases := contractCases()
	inProcess := runContract(t, cases, false)
	overHTTP := runContract(t, cases, true)
	for i, c := range cases {
		if inProcess[i] != overHTTP[i] {
			t.Errorf("%s: in process %+v, over HTTP %+v", c.name, inProcess[i], overHTTP[i])
		}
	}
}

// runContract runs the cases in order on a fresh hub, through the API's
// client when overHTTP, and checks each one's code.
func runContract(t *testing.T, cases []contractCase, overHTTP bool) []outcome {
	t.Helper()
	ctx := t.Context()
	dsn := pgtest.DSN(t)
	env := map[string]string{
		"STREAMING_HUB_POSTGRES_DSN":        dsn,
		"STREAMING_HUB_ENV":                 "local",
		"STREAMING_HUB_DEV_KEK":             e2eKEK,
		"STREAMING_HUB_ALLOW_PRIVATE_SINKS": "true",
		"STREAMING_HUB_ADMIN_TOKEN":         contractAdminToken,
	}
	control, serverURL := hubtest.Start(t, dsn, env)

	fx := contractSetup(t, control.As(hubapi.Admin()))
	as := func(caller string) hubapi.ControlPlane {
		if overHTTP {
			c, err := client.New(serverURL, client.WithToken(fx.tokens[caller]))
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		if caller == asAdmin {
			return control.As(hubapi.Admin())
		}
		who, err := control.Authenticate(ctx, fx.tokens[caller])
		if err != nil {
			t.Fatalf("authenticate %s: %v", caller, err)
		}
		return control.As(who)
	}

	mode := map[bool]string{false: "in process", true: "over HTTP"}[overHTTP]
	out := make([]outcome, len(cases))
	for i, c := range cases {
		summary, err := c.run(ctx, as(c.caller), fx)
		code := hubapi.ErrorCode(err)
		if err != nil && code == "" {
			t.Fatalf("%s, %s: an error without a code: %v", mode, c.name, err)
		}
		if code != c.want {
			t.Errorf("%s, %s: code %q (%v), want %q", mode, c.name, code, err, c.want)
		}
		if err != nil {
			summary = ""
		}
		out[i] = outcome{summary: summary, code: code}
	}
	return out
}

// contractSetup provisions the fixture through admin.
func contractSetup(t *testing.T, admin hubapi.ControlPlane) *contractFixture {
	t.Helper()
	ctx := t.Context()
	fx := &contractFixture{tokens: map[string]string{asAdmin: contractAdminToken}}
	for _, tenant := range []struct{ id, caller string }{{"acme", asAcme}, {"globex", asGlobex}} {
		if _, err := admin.CreateTenant(ctx, tenant.id); err != nil {
			t.Fatal(err)
		}
		key, err := admin.CreateAPIKey(ctx, tenant.id, "contract")
		if err != nil {
			t.Fatal(err)
		}
		fx.tokens[tenant.caller] = key.Key
		sub, err := admin.CreateSubscription(ctx, tenant.id, pullSubscription(tenant.id+" feed"))
		if err != nil {
			t.Fatal(err)
		}
		if tenant.id == "acme" {
			fx.acmeSub, fx.acmeKeyID = sub.ID, key.ID
		} else {
			fx.globexSub = sub.ID
		}
	}
	return fx
}
