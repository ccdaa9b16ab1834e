package service

import (
	"context"

	"github.com/hubctl/hubctl/internal/opevents"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// As is the control plane as caller may use it: every operation first
// settles what the caller may act on, so no front end can forget to.
// The admin acts on any existing tenant it names; a tenant API key or a
// tenant's portal session on its own tenant only ("" naming it), and on
// no admin operation; a read-only session changes nothing.
func (c *ControlPlane) As(caller hubapi.Caller) hubapi.ControlPlane {
	return &callerView{cp: c, caller: caller}
}

// Authenticate says who a tenant API key is: hubapi.ErrInvalidAPIKey for a
// token that is not a live key, hubapi.ErrTenantInactive when its tenant is
// inactive. The admin token is the front end's to recognise: it is
// configuration, not a stored key.
func (c *ControlPlane) Authenticate(ctx context.Context, token string) (hubapi.Caller, error) {
	holder, err := c.APIKeys.Authenticate(ctx, token)
	if err != nil {
		return hubapi.Caller{}, err
	}
	return hubapi.TenantKey(holder.TenantID, holder.KeyID), nil
}

var (
	errTenantKeyOnAdmin = &hubapi.ForbiddenError{Code: hubapi.CodeForbidden,
		Message: "a tenant API key cannot call the admin API; use the admin token"}
	errOtherTenant = &hubapi.ForbiddenError{Code: hubapi.CodeForbidden,
		Message: "an API key acts on its own tenant only"}
	errPortalOnAdmin = &hubapi.ForbiddenError{Code: hubapi.CodeForbidden,
		Message: "a tenant's portal session cannot use the operator's operations; the operator signs in with a console link (hubctl portal without --tenant)"}
	errReadOnly = &hubapi.ForbiddenError{Code: hubapi.CodeForbidden,
		Message: "this portal session is read-only: it can look but change nothing; ask for a link without read-only to make changes"}
	errUnknownCaller = &hubapi.ForbiddenError{Code: hubapi.CodeForbidden,
		Message: "the caller is neither the admin, a tenant API key nor a portal session"}
	errNoTenant = &hubapi.ValidationError{Field: "tenant", Code: hubapi.CodeInvalidRequest,
		Message: "the admin acts on a named tenant: name the tenant whose resources to act on"}
)

// callerView is ControlPlane.As's answer.
type callerView struct {
	cp     *ControlPlane
	caller hubapi.Caller
}

var _ hubapi.ControlPlane = (*callerView)(nil)

// admin refuses everyone but the admin.
func (v *callerView) admin() error {
	switch v.caller.Kind {
	case hubapi.CallerAdmin:
		return nil
	case hubapi.CallerTenantKey:
		return errTenantKeyOnAdmin
	case hubapi.CallerPortal:
		return errPortalOnAdmin
	}
	return errUnknownCaller
}

// changing refuses a read-only session any operation that changes
// something. Every such operation calls it, so no front end needs to
// remember which buttons to hide for the refusal to hold.
func (v *callerView) changing() error {
	if v.caller.ReadOnly {
		return errReadOnly
	}
	return nil
}

// adminChanging is admin and changing together, the admin's refusal first.
func (v *callerView) adminChanging() error {
	if err := v.admin(); err != nil {
		return err
	}
	return v.changing()
}

// changingUnless is changing for an operation that changes nothing when
// dryRun: a read-only session may count what a replay would do.
func (v *callerView) changingUnless(dryRun bool) error {
	if dryRun {
		return nil
	}
	return v.changing()
}

// tenant is the tenant an operation acts on when the caller names named.
// An admin's tenant must exist (an inactive one is fine: the admin may
// clean it up), so acting on an unknown tenant answers tenant_not_found
// rather than an empty list. It is checked on every call, so a follower
// reading pull pages notices its tenant deleted under it.
func (v *callerView) tenant(ctx context.Context, named string) (string, error) {
	switch v.caller.Kind {
	case hubapi.CallerAdmin:
		if named == "" {
			return "", errNoTenant
		}
		if err := v.cp.Tenants.Require(ctx, named); err != nil {
			return "", err
		}
		return named, nil
	case hubapi.CallerTenantKey, hubapi.CallerPortal:
		if named != "" && named != v.caller.Tenant {
			return "", errOtherTenant
		}
		return v.caller.Tenant, nil
	}
	return "", errUnknownCaller
}

// subscriptions is tenant for the subscription use cases, which are built
// on first use.
func (v *callerView) subscriptions(ctx context.Context, named string) (*Subscriptions, string, error) {
	tenant, err := v.tenant(ctx, named)
	if err != nil {
		return nil, "", err
	}
	subs, err := v.cp.Subscriptions()
	if err != nil {
		return nil, "", err
	}
	return subs.By(opevents.ActorOf(v.caller)), tenant, nil
}

// changingSubscriptions is subscriptions for an operation that changes
// one.
func (v *callerView) changingSubscriptions(ctx context.Context, named string) (*Subscriptions, string, error) {
	if err := v.changing(); err != nil {
		return nil, "", err
	}
	return v.subscriptions(ctx, named)
}

func (v *callerView) CreateTenant(ctx context.Context, id string) (hubapi.Tenant, error) {
	if err := v.adminChanging(); err != nil {
		return hubapi.Tenant{}, err
	}
	return v.cp.Tenants.Create(ctx, id)
}

func (v *callerView) ListTenants(ctx context.Context, p hubapi.ListParams) (hubapi.Page[hubapi.Tenant], error) {
	if err := v.admin(); err != nil {
		return hubapi.Page[hubapi.Tenant]{}, err
	}
	return v.cp.Tenants.List(ctx, p)
}

func (v *callerView) GetTenant(ctx context.Context, id string) (hubapi.Tenant, error) {
	if err := v.admin(); err != nil {
		return hubapi.Tenant{}, err
	}
	return v.cp.Tenants.Get(ctx, id)
}

func (v *callerView) SetTenantStatus(ctx context.Context, id, status string) (hubapi.Tenant, error) {
	if err := v.adminChanging(); err != nil {
		return hubapi.Tenant{}, err
	}
	return v.cp.Tenants.SetStatus(ctx, id, status)
}

func (v *callerView) PurgeTenant(ctx context.Context, id string) (hubapi.TenantPurgeResult, error) {
	if err := v.adminChanging(); err != nil {
		return hubapi.TenantPurgeResult{}, err
	}
	return v.cp.Tenants.Purge(ctx, id)
}

func (v *callerView) CreateAPIKey(ctx context.Context, tenantID, name string) (hubapi.CreatedAPIKey, error) {
	if err := v.adminChanging(); err != nil {
		return hubapi.CreatedAPIKey{}, err
	}
	return v.cp.APIKeys.Create(ctx, tenantID, name)
}

func (v *callerView) ListAPIKeys(ctx context.Context, tenantID string, p hubapi.ListParams) (hubapi.Page[hubapi.APIKey], error) {
	if err := v.admin(); err != nil {
		return hubapi.Page[hubapi.APIKey]{}, err
	}
	return v.cp.APIKeys.List(ctx, tenantID, p)
}

func (v *callerView) RevokeAPIKey(ctx context.Context, tenantID, keyID string) (hubapi.APIKey, error) {
	if err := v.adminChanging(); err != nil {
		return hubapi.APIKey{}, err
	}
	return v.cp.APIKeys.Revoke(ctx, tenantID, keyID)
}

func (v *callerView) ListQuarantine(ctx context.Context, p hubapi.QuarantineListParams) (hubapi.Page[hubapi.QuarantineSummary], error) {
	if err := v.admin(); err != nil {
		return hubapi.Page[hubapi.QuarantineSummary]{}, err
	}
	return v.cp.Quarantine.List(ctx, p)
}

func (v *callerView) GetQuarantined(ctx context.Context, id string) (hubapi.QuarantineItem, error) {
	if err := v.admin(); err != nil {
		return hubapi.QuarantineItem{}, err
	}
	return v.cp.Quarantine.Get(ctx, id)
}

func (v *callerView) StorageStatus(ctx context.Context) (hubapi.StorageStatus, error) {
	if err := v.admin(); err != nil {
		return hubapi.StorageStatus{}, err
	}
	return v.cp.Storage.Status(ctx)
}

func (v *callerView) PruneStorage(ctx context.Context, dryRun bool) (hubapi.StoragePruneResult, error) {
	if err := v.admin(); err != nil {
		return hubapi.StoragePruneResult{}, err
	}
	if err := v.changingUnless(dryRun); err != nil {
		return hubapi.StoragePruneResult{}, err
	}
	return v.cp.Storage.Prune(ctx, dryRun)
}

func (v *callerView) CreateSubscription(ctx context.Context, named string, in hubapi.SubscriptionCreate) (hubapi.CreatedSubscription, error) {
	subs, tenant, err := v.changingSubscriptions(ctx, named)
	if err != nil {
		return hubapi.CreatedSubscription{}, err
	}
	view, secret, err := subs.Create(ctx, tenant, in)
	if err != nil {
		return hubapi.CreatedSubscription{}, err
	}
	return hubapi.CreatedSubscription{Subscription: view, SigningSecret: secret}, nil
}

func (v *callerView) ListSubscriptions(ctx context.Context, named string, p hubapi.ListParams) (hubapi.Page[hubapi.Subscription], error) {
	subs, tenant, err := v.subscriptions(ctx, named)
	if err != nil {
		return hubapi.Page[hubapi.Subscription]{}, err
	}
	return subs.List(ctx, tenant, p)
}

func (v *callerView) GetSubscription(ctx context.Context, named, id string) (hubapi.Subscription, error) {
	subs, tenant, err := v.subscriptions(ctx, named)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	return subs.Get(ctx, tenant, id)
}

func (v *callerView) UpdateSubscription(ctx context.Context, named, id string, in hubapi.SubscriptionUpdate) (hubapi.UpdatedSubscription, error) {
	subs, tenant, err := v.changingSubscriptions(ctx, named)
	if err != nil {
		return hubapi.UpdatedSubscription{}, err
	}
	return subs.Update(ctx, tenant, id, in)
}

func (v *callerView) DeleteSubscription(ctx context.Context, named, id string) (hubapi.SubscriptionDeleted, error) {
	subs, tenant, err := v.changingSubscriptions(ctx, named)
	if err != nil {
		return hubapi.SubscriptionDeleted{}, err
	}
	canceled, err := subs.Delete(ctx, tenant, id)
	if err != nil {
		return hubapi.SubscriptionDeleted{}, err
	}
	return hubapi.SubscriptionDeleted{ID: id, CanceledJobs: canceled}, nil
}

func (v *callerView) EnableSubscription(ctx context.Context, named, id string) (hubapi.Subscription, error) {
	subs, tenant, err := v.changingSubscriptions(ctx, named)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	return subs.Enable(ctx, tenant, id)
}

func (v *callerView) DisableSubscription(ctx context.Context, named, id string) (hubapi.Subscription, error) {
	subs, tenant, err := v.changingSubscriptions(ctx, named)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	return subs.Disable(ctx, tenant, id)
}

func (v *callerView) VerifySubscription(ctx context.Context, named, id string) (hubapi.Subscription, error) {
	subs, tenant, err := v.changingSubscriptions(ctx, named)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	return subs.Verify(ctx, tenant, id)
}

func (v *callerView) RotateSecret(ctx context.Context, named, id, signingSecret string) (hubapi.SecretRotation, error) {
	subs, tenant, err := v.changingSubscriptions(ctx, named)
	if err != nil {
		return hubapi.SecretRotation{}, err
	}
	return subs.RotateSecret(ctx, tenant, id, signingSecret)
}

// RecoverSubscription reports progress in the inbox seqs covered.
func (v *callerView) RecoverSubscription(ctx context.Context, named, id string, in hubapi.SubscriptionRecover, progress func(done, total int64)) (hubapi.SubscriptionRecoverResult, error) {
	if err := v.changingUnless(in.DryRun); err != nil {
		return hubapi.SubscriptionRecoverResult{}, err
	}
	subs, tenant, err := v.subscriptions(ctx, named)
	if err != nil {
		return hubapi.SubscriptionRecoverResult{}, err
	}
	var report func(RecoverProgress)
	if progress != nil {
		report = func(p RecoverProgress) { progress(p.Done, p.Total) }
	}
	return subs.Recover(ctx, tenant, id, in, report)
}

func (v *callerView) ListDeliveries(ctx context.Context, named, subscriptionID string, p hubapi.DeliveryListParams) (hubapi.Page[hubapi.Delivery], error) {
	tenant, err := v.tenant(ctx, named)
	if err != nil {
		return hubapi.Page[hubapi.Delivery]{}, err
	}
	return v.cp.Deliveries.List(ctx, tenant, subscriptionID, p)
}

func (v *callerView) CountDeliveries(ctx context.Context, named string, subscriptionIDs []string) (hubapi.DeliveryCounts, error) {
	tenant, err := v.tenant(ctx, named)
	if err != nil {
		return hubapi.DeliveryCounts{}, err
	}
	return v.cp.Deliveries.Count(ctx, tenant, subscriptionIDs)
}

func (v *callerView) AttemptLatency(ctx context.Context, named, subscriptionID string) (hubapi.AttemptLatency, error) {
	tenant, err := v.tenant(ctx, named)
	if err != nil {
		return hubapi.AttemptLatency{}, err
	}
	return v.cp.Deliveries.Latency(ctx, tenant, subscriptionID)
}

func (v *callerView) GetDelivery(ctx context.Context, named, id string) (hubapi.DeliveryDetail, error) {
	tenant, err := v.tenant(ctx, named)
	if err != nil {
		return hubapi.DeliveryDetail{}, err
	}
	return v.cp.Deliveries.Get(ctx, tenant, id)
}

func (v *callerView) ListDeadLetters(ctx context.Context, named string, p hubapi.DeadLetterListParams) (hubapi.Page[hubapi.DeadLetter], error) {
	tenant, err := v.tenant(ctx, named)
	if err != nil {
		return hubapi.Page[hubapi.DeadLetter]{}, err
	}
	return v.cp.Deliveries.ListDeadLetters(ctx, tenant, p)
}

func (v *callerView) ReplayDeadLetters(ctx context.Context, named string, in hubapi.DeadLetterReplay) (hubapi.DeadLetterReplayResult, error) {
	if err := v.changingUnless(in.DryRun); err != nil {
		return hubapi.DeadLetterReplayResult{}, err
	}
	tenant, err := v.tenant(ctx, named)
	if err != nil {
		return hubapi.DeadLetterReplayResult{}, err
	}
	return v.cp.Deliveries.ReplayDeadLetters(ctx, tenant, in)
}

func (v *callerView) ListEvents(ctx context.Context, named string, p hubapi.EventListParams) (hubapi.Page[hubapi.InboxEvent], error) {
	tenant, err := v.tenant(ctx, named)
	if err != nil {
		return hubapi.Page[hubapi.InboxEvent]{}, err
	}
	return v.cp.Deliveries.ListEvents(ctx, tenant, p)
}

func (v *callerView) GetEvent(ctx context.Context, named, id string) (hubapi.EventDetail, error) {
	tenant, err := v.tenant(ctx, named)
	if err != nil {
		return hubapi.EventDetail{}, err
	}
	return v.cp.Deliveries.GetEvent(ctx, tenant, id)
}

// ReadEvents changes something: reading a pull page is its ack.
func (v *callerView) ReadEvents(ctx context.Context, named, subscriptionID string, p hubapi.PullParams) (hubapi.PullPage, error) {
	if err := v.changing(); err != nil {
		return hubapi.PullPage{}, err
	}
	tenant, err := v.tenant(ctx, named)
	if err != nil {
		return hubapi.PullPage{}, err
	}
	return v.cp.Pull.Read(ctx, tenant, subscriptionID, p)
}

func (v *callerView) CreatePortalLink(ctx context.Context, named string, in hubapi.PortalLinkCreate) (hubapi.PortalLink, error) {
	if err := v.changing(); err != nil {
		return hubapi.PortalLink{}, err
	}
	tenant, err := v.tenant(ctx, named)
	if err != nil {
		return hubapi.PortalLink{}, err
	}
	return v.cp.Portal.CreateLink(ctx, tenant, in)
}

func (v *callerView) CreateConsoleLink(ctx context.Context, in hubapi.PortalLinkCreate) (hubapi.PortalLink, error) {
	if err := v.adminChanging(); err != nil {
		return hubapi.PortalLink{}, err
	}
	return v.cp.Portal.CreateLink(ctx, "", in)
}

func (v *callerView) EndPortalSessions(ctx context.Context, named string) (hubapi.PortalSessionsEnded, error) {
	if err := v.adminChanging(); err != nil {
		return hubapi.PortalSessionsEnded{}, err
	}
	tenant, err := v.tenant(ctx, named)
	if err != nil {
		return hubapi.PortalSessionsEnded{}, err
	}
	return v.cp.Portal.EndSessions(ctx, tenant)
}
