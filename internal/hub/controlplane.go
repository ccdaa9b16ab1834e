package hub

import (
	"time"

	"github.com/hubctl/hubctl/internal/api"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/idempotency"
	"github.com/hubctl/hubctl/internal/portal"
	"github.com/hubctl/hubctl/internal/ratelimit"
	"github.com/hubctl/hubctl/internal/service"
	sinkregistry "github.com/hubctl/hubctl/internal/sink/registry"
	"github.com/hubctl/hubctl/internal/store"
)

// NewControlPlane assembles the use cases over st under cfg as `hubctl
// serve` runs them, for the API and for the CLI's direct mode alike: what
// the CLI stores, the hub reads, and the probes it sends obey the same
// address filter (STREAMING_HUB_ALLOW_PRIVATE_SINKS). keyring is asked
// for the key-encryption key only when the subscription use cases are
// first needed. The caller closes it, which closes the sinks' connections.
func NewControlPlane(cfg *config.Config, st *store.Store, keyring func() (*crypto.Keyring, error)) *service.ControlPlane {
	return service.NewControlPlane(st.Queue, st.Catalog, st.Lifecycle, service.ControlPlaneOptions{
		Retention: retentionPolicy(cfg),
		Portal:    service.PortalOptions{Enabled: cfg.Portal.Enabled, BaseURL: cfg.PortalBaseURL()},
		NewSubscriptions: func() (*service.Subscriptions, func(), error) {
			keys, err := keyring()
			if err != nil {
				return nil, nil, err
			}
			sinks, err := sinkregistry.New(sinkregistry.Options{AllowPrivate: cfg.AllowPrivateSinks})
			if err != nil {
				return nil, nil, err
			}
			return service.NewSubscriptions(st.Catalog, st.Queue, st.OnCall, keys, sinks.Registry, service.SubscriptionOptions{
				RotationOverlap: cfg.RotationOverlap, MaxPerTenant: cfg.MaxSubscriptionsPerTenant, TypePrefix: cfg.Ingest.TypePrefix,
				RelayOperational: cfg.Kafka.OperationalTopic != ""}), sinks.Close, nil
		},
	})
}

// NewAPI builds the HTTP API of `hubctl serve` over control: base's
// logger, metrics and readiness checks, with the admin token, idempotency
// keys and pull rate of cfg, and the portal under /portal/ unless cfg
// turns it off.
func NewAPI(cfg *config.Config, st *store.Store, control *service.ControlPlane, keys *crypto.Keyring, base api.Options) *api.Server {
	base.AdminToken = cfg.AdminToken
	base.ControlPlane = control
	base.Idempotency = idempotency.New(st.Catalog, keys, time.Now)
	base.PullLimiter = ratelimit.New(cfg.Pull.Rate, cfg.Pull.Burst, time.Now)
	if cfg.Portal.Enabled {
		base.Portal = portal.New(portal.Options{Sessions: control, FrameAncestors: cfg.Portal.FrameAncestors, Logger: base.Logger})
	}
	return api.New(base)
}
