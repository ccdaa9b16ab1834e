package hub

import (
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/service"
	sinkregistry "github.com/hubctl/hubctl/internal/sink/registry"
	"github.com/hubctl/hubctl/internal/store"
)

// ControlPlane is the hub's use cases as `hubctl serve` runs them, for the
// API and for the CLI's direct mode alike: what the CLI stores, the hub
// reads, and the probes it sends obey the same address filter
// (STREAMING_HUB_ALLOW_PRIVATE_SINKS). Its sinks are the ones dispatch
// delivers through.
type ControlPlane struct {
	*service.ControlPlane
	sinks *sinkregistry.Sinks
}

// NewControlPlane assembles the use cases over st under cfg. keyring is
// asked for the key-encryption key only when the subscription use cases
// are first needed.
func NewControlPlane(cfg *config.Config, st *store.Store, keyring func() (*crypto.Keyring, error)) *ControlPlane {
	c := &ControlPlane{}
	c.ControlPlane = service.NewControlPlane(st, service.ControlPlaneOptions{
		Retention: retentionPolicy(cfg),
		NewSubscriptions: func() (*service.Subscriptions, error) {
			keys, err := keyring()
			if err != nil {
				return nil, err
			}
			sinks, err := sinkregistry.New(sinkregistry.Options{AllowPrivate: cfg.AllowPrivateSinks})
			if err != nil {
				return nil, err
			}
			c.sinks = sinks
			return service.NewSubscriptions(st, keys, sinks.Registry, service.SubscriptionOptions{
				RotationOverlap: cfg.RotationOverlap, MaxPerTenant: cfg.MaxSubscriptionsPerTenant}), nil
		},
	})
	return c
}

// Close releases the sinks' connections.
func (c *ControlPlane) Close() {
	if c.sinks != nil {
		c.sinks.Close()
	}
}
