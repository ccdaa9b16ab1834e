package hubapi

import "context"

// ControlPlane is every operation of the hub's control plane, the one
// contract its front ends (the HTTP API, the CLI in either mode, a portal)
// program against. internal/service implements it in process, for one
// Caller at a time; pkg/client implements it over HTTP, the caller being
// whoever the client's token authenticates.
//
// Operations on one tenant's resources take that tenant first: "" means
// the caller's own tenant (a tenant API key's), and is refused for the
// admin, who must name an existing tenant. A tenant API key naming another
// tenant is refused (ForbiddenError), and so is a tenant API key calling
// an admin operation. Another tenant's resource answers exactly like a
// missing one.
type ControlPlane interface {
	CreateTenant(ctx context.Context, id string) (Tenant, error)
	ListTenants(ctx context.Context, p ListParams) (Page[Tenant], error)
	GetTenant(ctx context.Context, id string) (Tenant, error)
	SetTenantStatus(ctx context.Context, id, status string) (Tenant, error)
	// PurgeTenant removes a tenant and every row it has, once none of its
	// deliveries is in flight.
	PurgeTenant(ctx context.Context, id string) (TenantPurgeResult, error)

	CreateAPIKey(ctx context.Context, tenantID, name string) (CreatedAPIKey, error)
	ListAPIKeys(ctx context.Context, tenantID string, p ListParams) (Page[APIKey], error)
	RevokeAPIKey(ctx context.Context, tenantID, keyID string) (APIKey, error)

	ListQuarantine(ctx context.Context, p QuarantineListParams) (Page[QuarantineSummary], error)
	GetQuarantined(ctx context.Context, id string) (QuarantineItem, error)

	// CreateConsoleLink signs the operator into the portal's console.
	CreateConsoleLink(ctx context.Context, in PortalLinkCreate) (PortalLink, error)
	// EndPortalSessions signs every browser of a tenant out of the portal.
	EndPortalSessions(ctx context.Context, tenant string) (PortalSessionsEnded, error)

	StorageStatus(ctx context.Context) (StorageStatus, error)
	PruneStorage(ctx context.Context, dryRun bool) (StoragePruneResult, error)

	CreateSubscription(ctx context.Context, tenant string, in SubscriptionCreate) (CreatedSubscription, error)
	ListSubscriptions(ctx context.Context, tenant string, p ListParams) (Page[Subscription], error)
	GetSubscription(ctx context.Context, tenant, id string) (Subscription, error)
	UpdateSubscription(ctx context.Context, tenant, id string, in SubscriptionUpdate) (UpdatedSubscription, error)
	DeleteSubscription(ctx context.Context, tenant, id string) (SubscriptionDeleted, error)
	EnableSubscription(ctx context.Context, tenant, id string) (Subscription, error)
	DisableSubscription(ctx context.Context, tenant, id string) (Subscription, error)
	// VerifySubscription probes the destination again; a failed probe is
	// an UnprocessableError (verification_failed) with the probe's message.
	VerifySubscription(ctx context.Context, tenant, id string) (Subscription, error)
	// RotateSecret gives a webhook a new signing secret, signingSecret or,
	// when it is "", one the hub generates.
	RotateSecret(ctx context.Context, tenant, id, signingSecret string) (SecretRotation, error)
	// RecoverSubscription queues again what a subscription missed in a
	// time range (docs/api.md, Recover). progress, if not nil, is told how
	// much of the work is done, in units of the implementation's own.
	RecoverSubscription(ctx context.Context, tenant, id string, in SubscriptionRecover, progress func(done, total int64)) (SubscriptionRecoverResult, error)

	// CreatePortalLink signs a tenant's people into the portal (SPEC §10).
	CreatePortalLink(ctx context.Context, tenant string, in PortalLinkCreate) (PortalLink, error)

	ListDeliveries(ctx context.Context, tenant, subscriptionID string, p DeliveryListParams) (Page[Delivery], error)
	GetDelivery(ctx context.Context, tenant, id string) (DeliveryDetail, error)
	// CountDeliveries counts each subscription's deliveries of the last
	// DeliveryCountsWindow, at most MaxDeliveryCountsSubscriptions at once.
	CountDeliveries(ctx context.Context, tenant string, subscriptionIDs []string) (DeliveryCounts, error)
	// AttemptLatency is a subscription's attempt durations per hour of the
	// last LatencyHours.
	AttemptLatency(ctx context.Context, tenant, subscriptionID string) (AttemptLatency, error)

	ListDeadLetters(ctx context.Context, tenant string, p DeadLetterListParams) (Page[DeadLetter], error)
	ReplayDeadLetters(ctx context.Context, tenant string, in DeadLetterReplay) (DeadLetterReplayResult, error)

	ListEvents(ctx context.Context, tenant string, p EventListParams) (Page[InboxEvent], error)
	GetEvent(ctx context.Context, tenant, id string) (EventDetail, error)

	// ReadEvents reads a page of a pull subscription; reading is the ack.
	ReadEvents(ctx context.Context, tenant, subscriptionID string, p PullParams) (PullPage, error)
}

// CallerKind is what authenticated a caller.
type CallerKind int

const (
	// CallerAdmin is the operator: the admin token, or the CLI working
	// directly on the database.
	CallerAdmin CallerKind = iota + 1
	// CallerTenantKey is a tenant API key, acting on its own tenant only.
	CallerTenantKey
	// CallerPortal is a tenant's portal session (SPEC §10), acting on its
	// own tenant only, and changing nothing when ReadOnly. (The operator
	// console's session is CallerAdmin with Session set.)
	CallerPortal
)

// Caller is who is asking, carried into every operation so that the
// operation itself decides what the caller may touch.
type Caller struct {
	Kind CallerKind
	// Tenant is a tenant key's own tenant; "" for the admin.
	Tenant string
	// KeyID is the tenant key's id.
	KeyID string
	// Session is the portal session's id: a tenant's (CallerPortal) or the
	// operator console's (CallerAdmin); "" for a caller without one.
	Session string
	// ReadOnly is a read-only portal session: it may see what its kind
	// may see and change nothing.
	ReadOnly bool
}

// Admin is the operator's caller.
func Admin() Caller { return Caller{Kind: CallerAdmin} }

// PortalSession is the caller a tenant's portal session authenticates.
func PortalSession(tenant, session string, readOnly bool) Caller {
	return Caller{Kind: CallerPortal, Tenant: tenant, Session: session, ReadOnly: readOnly}
}

// TenantKey is the caller a tenant API key authenticates.
func TenantKey(tenant, keyID string) Caller {
	return Caller{Kind: CallerTenantKey, Tenant: tenant, KeyID: keyID}
}
