package hubaccess

import (
	"context"
	"errors"
	"net/http"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/pkg/client"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// remote calls the hub's API.
type remote struct {
	client *client.Client
}

func (r *remote) Close() {}

// tenantClient acts on tenant, or on the API key's own tenant when tenant
// is "".
func (r *remote) tenantClient(tenant string) *client.Client {
	if tenant == "" {
		return r.client
	}
	return r.client.ForTenant(tenant)
}

// scopeError turns the API's complaint about a missing X-Tenant-Id, which
// only the admin token provokes, into the usage error direct mode gives
// for a missing --tenant: the user's mistake is on the command line.
func scopeError(tenant string, err error) error {
	if tenant != "" || !missingTenantHeader(err) {
		return err
	}
	return cmdutil.UsageErrorf("--tenant (or %s) is required with the admin token: it names the tenant whose subscriptions to act on", EnvTenant)
}

func missingTenantHeader(err error) bool {
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		return false
	}
	field, _ := apiErr.Body.Details["field"].(string)
	return http.CanonicalHeaderKey(field) == http.CanonicalHeaderKey(client.HeaderTenantID)
}

func listOptions(p service.ListParams) client.ListOptions {
	return client.ListOptions{Limit: p.Limit, Cursor: p.Cursor}
}

func (r *remote) CreateTenant(ctx context.Context, id string) (hubapi.Tenant, error) {
	return r.client.CreateTenant(ctx, id)
}

func (r *remote) ListTenants(ctx context.Context, p service.ListParams) (hubapi.Page[hubapi.Tenant], error) {
	return r.client.ListTenants(ctx, listOptions(p))
}

func (r *remote) GetTenant(ctx context.Context, id string) (hubapi.Tenant, error) {
	return r.client.GetTenant(ctx, id)
}

func (r *remote) SetTenantStatus(ctx context.Context, id, status string) (hubapi.Tenant, error) {
	return r.client.SetTenantStatus(ctx, id, status)
}

func (r *remote) CreateAPIKey(ctx context.Context, tenantID, name string) (hubapi.CreatedAPIKey, error) {
	return r.client.CreateAPIKey(ctx, tenantID, name)
}

func (r *remote) ListAPIKeys(ctx context.Context, tenantID string, p service.ListParams) (hubapi.Page[hubapi.APIKey], error) {
	return r.client.ListAPIKeys(ctx, tenantID, listOptions(p))
}

func (r *remote) RevokeAPIKey(ctx context.Context, tenantID, keyID string) (hubapi.APIKey, error) {
	return r.client.RevokeAPIKey(ctx, tenantID, keyID)
}

func (r *remote) ListQuarantine(ctx context.Context, p service.QuarantineListParams) (hubapi.Page[hubapi.QuarantineSummary], error) {
	return r.client.ListQuarantine(ctx, client.QuarantineListOptions{ListOptions: listOptions(p.ListParams), Reason: p.Reason, Topic: p.Topic})
}

func (r *remote) GetQuarantined(ctx context.Context, id string) (hubapi.QuarantineItem, error) {
	return r.client.GetQuarantined(ctx, id)
}

func (r *remote) CreateSubscription(ctx context.Context, tenant string, in hubapi.SubscriptionCreate) (hubapi.CreatedSubscription, error) {
	created, err := r.tenantClient(tenant).CreateSubscription(ctx, in)
	return created, scopeError(tenant, err)
}

func (r *remote) ListSubscriptions(ctx context.Context, tenant string, p service.ListParams) (hubapi.Page[hubapi.Subscription], error) {
	page, err := r.tenantClient(tenant).ListSubscriptions(ctx, listOptions(p))
	return page, scopeError(tenant, err)
}

func (r *remote) GetSubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error) {
	sub, err := r.tenantClient(tenant).GetSubscription(ctx, id)
	return sub, scopeError(tenant, err)
}

func (r *remote) UpdateSubscription(ctx context.Context, tenant, id string, in hubapi.SubscriptionUpdate) (hubapi.UpdatedSubscription, error) {
	sub, err := r.tenantClient(tenant).UpdateSubscription(ctx, id, in)
	return sub, scopeError(tenant, err)
}

func (r *remote) DeleteSubscription(ctx context.Context, tenant, id string) (hubapi.SubscriptionDeleted, error) {
	deleted, err := r.tenantClient(tenant).DeleteSubscription(ctx, id)
	return deleted, scopeError(tenant, err)
}

func (r *remote) EnableSubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error) {
	sub, err := r.tenantClient(tenant).EnableSubscription(ctx, id)
	return sub, scopeError(tenant, err)
}

func (r *remote) DisableSubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error) {
	sub, err := r.tenantClient(tenant).DisableSubscription(ctx, id)
	return sub, scopeError(tenant, err)
}

func (r *remote) VerifySubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error) {
	sub, err := r.tenantClient(tenant).VerifySubscription(ctx, id)
	return sub, scopeError(tenant, err)
}

func (r *remote) RotateSecret(ctx context.Context, tenant, id, signingSecret string) (hubapi.SecretRotation, error) {
	rotation, err := r.tenantClient(tenant).RotateSecret(ctx, id, signingSecret)
	return rotation, scopeError(tenant, err)
}

func (r *remote) ListDeliveries(ctx context.Context, tenant, subscriptionID string, p service.DeliveryListParams) (hubapi.Page[hubapi.Delivery], error) {
	page, err := r.tenantClient(tenant).ListDeliveries(ctx, subscriptionID, client.DeliveryListOptions{ListOptions: listOptions(p.ListParams), State: p.State})
	return page, scopeError(tenant, err)
}

func (r *remote) GetDelivery(ctx context.Context, tenant, id string) (hubapi.DeliveryDetail, error) {
	detail, err := r.tenantClient(tenant).GetDelivery(ctx, id)
	return detail, scopeError(tenant, err)
}

func (r *remote) ReadEvents(ctx context.Context, tenant, subscriptionID string, p service.PullParams) (hubapi.PullPage, error) {
	page, err := r.tenantClient(tenant).ReadEvents(ctx, subscriptionID, p.Limit, p.After)
	return page, scopeError(tenant, err)
}

// Check makes one authenticated call to the target's hub, so a context is
// stored only once its server answered and took its token. The admin
// token without a tenant is told apart by the hub asking for one, which it
// does only after accepting the token.
func Check(ctx context.Context, target Target) error {
	h, err := openRemote(target)
	if err != nil {
		return err
	}
	_, err = h.(*remote).tenantClient(target.Tenant).ListSubscriptions(ctx, client.ListOptions{Limit: 1})
	if target.Tenant == "" && missingTenantHeader(err) {
		return nil
	}
	return err
}
