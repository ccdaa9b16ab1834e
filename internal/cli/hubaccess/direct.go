package hubaccess

import (
	"context"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/hub"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// direct runs the use cases on the database, as `hubctl serve` does behind
// the API, assembled the same way (hub.NewControlPlane).
type direct struct {
	store *store.Store
	cp    *hub.ControlPlane
}

func openDirect(ctx context.Context, f *cmdutil.Factory) (Hub, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	if cfg.Postgres.DSN == "" {
		return nil, errNoHub
	}
	st, err := f.Store(ctx)
	if err != nil {
		return nil, err
	}
	keyring := func() (*crypto.Keyring, error) { return hub.LoadKeyring(cfg, f.LookupEnv) }
	return &direct{store: st, cp: hub.NewControlPlane(cfg, st, keyring)}, nil
}

func (d *direct) Close() {
	d.cp.Close()
	d.store.Close()
}

// scoped checks the tenant of a subscription operation (checkTenant) and
// returns the subscription use cases.
func (d *direct) scoped(ctx context.Context, tenant string) (*service.Subscriptions, error) {
	subs, err := d.cp.Subscriptions()
	if err != nil {
		return nil, err
	}
	if err := d.checkTenant(ctx, tenant); err != nil {
		return nil, err
	}
	return subs, nil
}

// checkTenant checks that the tenant is named and exists, as the API does
// for the admin token's X-Tenant-Id.
func (d *direct) checkTenant(ctx context.Context, tenant string) error {
	if tenant == "" {
		return errNoTenant()
	}
	return d.cp.Tenants.Require(ctx, tenant)
}

func errNoTenant() error {
	return cmdutil.UsageErrorf("--tenant (or %s) is required when working directly on the database", EnvTenant)
}

func (d *direct) CreateTenant(ctx context.Context, id string) (hubapi.Tenant, error) {
	return d.cp.Tenants.Create(ctx, id)
}

func (d *direct) ListTenants(ctx context.Context, p service.ListParams) (hubapi.Page[hubapi.Tenant], error) {
	return d.cp.Tenants.List(ctx, p)
}

func (d *direct) GetTenant(ctx context.Context, id string) (hubapi.Tenant, error) {
	return d.cp.Tenants.Get(ctx, id)
}

func (d *direct) SetTenantStatus(ctx context.Context, id, status string) (hubapi.Tenant, error) {
	return d.cp.Tenants.SetStatus(ctx, id, status)
}

func (d *direct) CreateAPIKey(ctx context.Context, tenantID, name string) (hubapi.CreatedAPIKey, error) {
	return d.cp.APIKeys.Create(ctx, tenantID, name)
}

func (d *direct) ListAPIKeys(ctx context.Context, tenantID string, p service.ListParams) (hubapi.Page[hubapi.APIKey], error) {
	return d.cp.APIKeys.List(ctx, tenantID, p)
}

func (d *direct) RevokeAPIKey(ctx context.Context, tenantID, keyID string) (hubapi.APIKey, error) {
	return d.cp.APIKeys.Revoke(ctx, tenantID, keyID)
}

func (d *direct) ListQuarantine(ctx context.Context, p service.QuarantineListParams) (hubapi.Page[hubapi.QuarantineSummary], error) {
	return d.cp.Quarantine.List(ctx, p)
}

func (d *direct) GetQuarantined(ctx context.Context, id string) (hubapi.QuarantineItem, error) {
	return d.cp.Quarantine.Get(ctx, id)
}

func (d *direct) CreateSubscription(ctx context.Context, tenant string, in hubapi.SubscriptionCreate) (hubapi.CreatedSubscription, error) {
	subs, err := d.scoped(ctx, tenant)
	if err != nil {
		return hubapi.CreatedSubscription{}, err
	}
	view, secret, err := subs.Create(ctx, tenant, in)
	return hubapi.CreatedSubscription{Subscription: view, SigningSecret: secret}, err
}

func (d *direct) ListSubscriptions(ctx context.Context, tenant string, p service.ListParams) (hubapi.Page[hubapi.Subscription], error) {
	subs, err := d.scoped(ctx, tenant)
	if err != nil {
		return hubapi.Page[hubapi.Subscription]{}, err
	}
	return subs.List(ctx, tenant, p)
}

func (d *direct) GetSubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error) {
	subs, err := d.scoped(ctx, tenant)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	return subs.Get(ctx, tenant, id)
}

func (d *direct) UpdateSubscription(ctx context.Context, tenant, id string, in hubapi.SubscriptionUpdate) (hubapi.UpdatedSubscription, error) {
	subs, err := d.scoped(ctx, tenant)
	if err != nil {
		return hubapi.UpdatedSubscription{}, err
	}
	return subs.Update(ctx, tenant, id, in)
}

func (d *direct) DeleteSubscription(ctx context.Context, tenant, id string) (hubapi.SubscriptionDeleted, error) {
	subs, err := d.scoped(ctx, tenant)
	if err != nil {
		return hubapi.SubscriptionDeleted{}, err
	}
	canceled, err := subs.Delete(ctx, tenant, id)
	if err != nil {
		return hubapi.SubscriptionDeleted{}, err
	}
	return hubapi.SubscriptionDeleted{ID: id, CanceledJobs: canceled}, nil
}

func (d *direct) EnableSubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error) {
	subs, err := d.scoped(ctx, tenant)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	return subs.Enable(ctx, tenant, id)
}

func (d *direct) DisableSubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error) {
	subs, err := d.scoped(ctx, tenant)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	return subs.Disable(ctx, tenant, id)
}

func (d *direct) VerifySubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error) {
	subs, err := d.scoped(ctx, tenant)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	return subs.Verify(ctx, tenant, id)
}

func (d *direct) RotateSecret(ctx context.Context, tenant, id, signingSecret string) (hubapi.SecretRotation, error) {
	subs, err := d.scoped(ctx, tenant)
	if err != nil {
		return hubapi.SecretRotation{}, err
	}
	return subs.RotateSecret(ctx, tenant, id, signingSecret)
}

func (d *direct) ListDeliveries(ctx context.Context, tenant, subscriptionID string, p service.DeliveryListParams) (hubapi.Page[hubapi.Delivery], error) {
	if err := d.checkTenant(ctx, tenant); err != nil {
		return hubapi.Page[hubapi.Delivery]{}, err
	}
	return d.cp.Deliveries.List(ctx, tenant, subscriptionID, p)
}

func (d *direct) GetDelivery(ctx context.Context, tenant, id string) (hubapi.DeliveryDetail, error) {
	if err := d.checkTenant(ctx, tenant); err != nil {
		return hubapi.DeliveryDetail{}, err
	}
	return d.cp.Deliveries.Get(ctx, tenant, id)
}

// ReadEvents checks the tenant on every read, as the API authenticates
// every request: a follower notices a tenant deleted under it.
func (d *direct) ReadEvents(ctx context.Context, tenant, subscriptionID string, p service.PullParams) (hubapi.PullPage, error) {
	if err := d.checkTenant(ctx, tenant); err != nil {
		return hubapi.PullPage{}, err
	}
	return d.cp.Pull.Read(ctx, tenant, subscriptionID, p)
}
