package service

import (
	"sync"
	"time"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/lifecycle"
	portalstore "github.com/hubctl/hubctl/internal/store/portal"
	"github.com/hubctl/hubctl/internal/store/queue"
)

// ControlPlane is every use case of the hub over one store, assembled in
// one place (NewControlPlane) for both the API of `hubctl serve` and the
// CLI's direct mode, so the two cannot drift apart. It checks no caller:
// front ends reach it through As, which does.
type ControlPlane struct {
	Tenants    *Tenants
	APIKeys    *APIKeys
	Quarantine *Quarantine
	Deliveries *Deliveries
	Pull       *Pull
	Storage    *Storage
	Portal     *Portal

	subscriptions func() (*Subscriptions, error)
	mu            sync.Mutex
	release       func()
}

// ControlPlaneOptions are what the use cases need beyond the store.
type ControlPlaneOptions struct {
	Now       func() time.Time // default time.Now
	Retention lifecycle.RetentionPolicy
	Portal    PortalOptions
	// NewSubscriptions builds the subscription use cases. They need the
	// key-encryption key and the sinks, which tenant, key and storage
	// commands must not require, so it runs on first use, once. release,
	// if not nil, frees what they hold (the sinks' connections) on Close.
	NewSubscriptions func() (subs *Subscriptions, release func(), err error)
}

// NewControlPlane assembles the use cases over the statements of each
// concern of the store.
func NewControlPlane(jobs *queue.Store, cat *catalog.Store, life *lifecycle.Store, o ControlPlaneOptions) *ControlPlane {
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &ControlPlane{
		Tenants:    NewTenants(cat, life, o.Now),
		APIKeys:    NewAPIKeys(cat, o.Now),
		Quarantine: NewQuarantine(cat),
		Deliveries: NewDeliveries(cat),
		Pull:       NewPull(jobs),
		Storage:    NewStorage(life, o.Retention, o.Now),
		Portal:     NewPortal(portalstore.New(cat.Pool), o.Now, o.Portal),
	}
	c.subscriptions = sync.OnceValues(func() (*Subscriptions, error) {
		subs, release, err := o.NewSubscriptions()
		c.mu.Lock()
		c.release = release
		c.mu.Unlock()
		return subs, err
	})
	return c
}

// Subscriptions returns the subscription use cases, building them on the
// first call.
func (c *ControlPlane) Subscriptions() (*Subscriptions, error) { return c.subscriptions() }

// Close frees what the subscription use cases hold, if they were built.
// The store is the caller's.
func (c *ControlPlane) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.release != nil {
		c.release()
		c.release = nil
	}
}
