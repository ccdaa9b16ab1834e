package hubaccess

import (
	"context"
	"sync"
	"time"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/hub"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/sink/registry"
	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// direct runs the use cases on the database, as `hubctl serve` does behind
// the API.
type direct struct {
	store      *store.Store
	cfg        *config.Config
	lookupEnv  func(string) (string, bool)
	tenants    *service.Tenants
	apiKeys    *service.APIKeys
	quarantine *service.Quarantine
	deliveries *service.Deliveries
	pull       *service.Pull

	// The subscription use cases need the key-encryption key and the sink
	// registry, which tenant and key commands must not require: they are
	// built on first use.
	subsOnce sync.Once
	subs     *service.Subscriptions
	sinks    *registry.Sinks
	subsErr  error
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
	return &direct{
		store:      st,
		cfg:        cfg,
		lookupEnv:  f.LookupEnv,
		tenants:    service.NewTenants(st, time.Now),
		apiKeys:    service.NewAPIKeys(st, time.Now),
		quarantine: service.NewQuarantine(st),
		deliveries: service.NewDeliveries(st),
		pull:       service.NewPull(st),
	}, nil
}

func (d *direct) Close() {
	if d.sinks != nil {
		d.sinks.Close()
	}
	d.store.Close()
}

// subscriptions builds the subscription use cases the way serve does, so
// that what the CLI stores, the hub can read, and the probes it sends obey
// the same address filter (STREAMING_HUB_ALLOW_PRIVATE_SINKS).
func (d *direct) subscriptions() (*service.Subscriptions, error) {
	d.subsOnce.Do(func() {
		keys, err := hub.LoadKeyring(d.cfg, d.lookupEnv)
		if err != nil {
			d.subsErr = err
			return
		}
		sinks, err := registry.New(registry.Options{AllowPrivate: d.cfg.AllowPrivateSinks})
		if err != nil {
			d.subsErr = err
			return
		}
		d.sinks = sinks
		d.subs = service.NewSubscriptions(d.store, keys, sinks.Registry, service.SubscriptionOptions{RotationOverlap: d.cfg.RotationOverlap})
	})
	return d.subs, d.subsErr
}

// scoped checks that a subscription operation names a tenant that exists,
// as the API does for the admin token's X-Tenant-Id: acting on an unknown
// tenant answers tenant_not_found in both modes, rather than an empty list
// here and a 404 there.
func (d *direct) scoped(ctx context.Context, tenant string) (*service.Subscriptions, error) {
	if tenant == "" {
		return nil, errNoTenant()
	}
	subs, err := d.subscriptions()
	if err != nil {
		return nil, err
	}
	if _, err := d.tenants.Get(ctx, tenant); err != nil {
		return nil, err
	}
	return subs, nil
}

// checkTenant is scoped's check for reads that need no key-encryption key
// (deliveries and pull streams hold nothing sealed): the tenant is named
// and exists.
func (d *direct) checkTenant(ctx context.Context, tenant string) error {
	if tenant == "" {
		return errNoTenant()
	}
	_, err := d.tenants.Get(ctx, tenant)
	return err
}

func errNoTenant() error {
	return cmdutil.UsageErrorf("--tenant (or %s) is required when working directly on the database", EnvTenant)
}

func (d *direct) CreateTenant(ctx context.Context, id string) (hubapi.Tenant, error) {
	return d.tenants.Create(ctx, id)
}

func (d *direct) ListTenants(ctx context.Context, p service.ListParams) (hubapi.Page[hubapi.Tenant], error) {
	return d.tenants.List(ctx, p)
}

func (d *direct) GetTenant(ctx context.Context, id string) (hubapi.Tenant, error) {
	return d.tenants.Get(ctx, id)
}

func (d *direct) SetTenantStatus(ctx context.Context, id, status string) (hubapi.Tenant, error) {
	return d.tenants.SetStatus(ctx, id, status)
}

func (d *direct) CreateAPIKey(ctx context.Context, tenantID, name string) (hubapi.CreatedAPIKey, error) {
	return d.apiKeys.Create(ctx, tenantID, name)
}

func (d *direct) ListAPIKeys(ctx context.Context, tenantID string, p service.ListParams) (hubapi.Page[hubapi.APIKey], error) {
	return d.apiKeys.List(ctx, tenantID, p)
}

func (d *direct) RevokeAPIKey(ctx context.Context, tenantID, keyID string) (hubapi.APIKey, error) {
	return d.apiKeys.Revoke(ctx, tenantID, keyID)
}

func (d *direct) ListQuarantine(ctx context.Context, p service.QuarantineListParams) (hubapi.Page[hubapi.QuarantineSummary], error) {
	return d.quarantine.List(ctx, p)
}

func (d *direct) GetQuarantined(ctx context.Context, id string) (hubapi.QuarantineItem, error) {
	return d.quarantine.Get(ctx, id)
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
	return d.deliveries.List(ctx, tenant, subscriptionID, p)
}

func (d *direct) GetDelivery(ctx context.Context, tenant, id string) (hubapi.DeliveryDetail, error) {
	if err := d.checkTenant(ctx, tenant); err != nil {
		return hubapi.DeliveryDetail{}, err
	}
	return d.deliveries.Get(ctx, tenant, id)
}

// ReadEvents checks the tenant on every read, as the API authenticates
// every request: a follower notices a tenant deleted under it.
func (d *direct) ReadEvents(ctx context.Context, tenant, subscriptionID string, p service.PullParams) (hubapi.PullPage, error) {
	if err := d.checkTenant(ctx, tenant); err != nil {
		return hubapi.PullPage{}, err
	}
	return d.pull.Read(ctx, tenant, subscriptionID, p)
}
