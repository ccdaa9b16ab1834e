package service

import (
	"sync"
	"time"

	"github.com/hubctl/hubctl/internal/store"
)

// ControlPlane is every use case of the hub over one store, assembled in
// one place (NewControlPlane) for both the API of `hubctl serve` and the
// CLI's direct mode, so the two cannot drift apart.
type ControlPlane struct {
	Tenants    *Tenants
	APIKeys    *APIKeys
	Quarantine *Quarantine
	Deliveries *Deliveries
	Pull       *Pull
	Storage    *Storage

	subscriptions func() (*Subscriptions, error)
}

// ControlPlaneOptions are what the use cases need beyond the store.
type ControlPlaneOptions struct {
	Now       func() time.Time // default time.Now
	Retention store.RetentionPolicy
	// NewSubscriptions builds the subscription use cases. They need the
	// key-encryption key and the sinks, which tenant, key and storage
	// commands must not require, so it runs on first use, once.
	NewSubscriptions func() (*Subscriptions, error)
}

// NewControlPlane assembles the use cases over st.
func NewControlPlane(st *store.Store, o ControlPlaneOptions) *ControlPlane {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &ControlPlane{
		Tenants:       NewTenants(st, o.Now),
		APIKeys:       NewAPIKeys(st, o.Now),
		Quarantine:    NewQuarantine(st),
		Deliveries:    NewDeliveries(st),
		Pull:          NewPull(st),
		Storage:       NewStorage(st, o.Retention, o.Now),
		subscriptions: sync.OnceValues(o.NewSubscriptions),
	}
}

// Subscriptions returns the subscription use cases, building them on the
// first call.
func (c *ControlPlane) Subscriptions() (*Subscriptions, error) { return c.subscriptions() }
