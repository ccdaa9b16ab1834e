package service

import (
	"context"
	"time"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func tenantView(t catalog.Tenant) hubapi.Tenant {
	return hubapi.Tenant{ID: t.ID, Status: string(t.Status), CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC()}
}

// Tenants manages the tenant roster that ingest's gate reads (docs/concepts.md, Tenants).
type Tenants struct {
	store *catalog.Store
	// purges removes a tenant's rows (Purge).
	purges *lifecycle.Store
	now    func() time.Time
}

// NewTenants returns the tenant use cases over st, purging through
// purges; now stamps created_at and updated_at.
func NewTenants(st *catalog.Store, purges *lifecycle.Store, now func() time.Time) *Tenants {
	return &Tenants{store: st, purges: purges, now: now}
}

// Create adds an active tenant.
func (s *Tenants) Create(ctx context.Context, id string) (hubapi.Tenant, error) {
	if err := hubapi.CheckTenantID(id); err != nil {
		return hubapi.Tenant{}, err
	}
	t, err := s.store.CreateTenant(ctx, id, s.now())
	if err != nil {
		return hubapi.Tenant{}, tenantError(id, err)
	}
	return tenantView(t), nil
}

// Get reads one tenant.
func (s *Tenants) Get(ctx context.Context, id string) (hubapi.Tenant, error) {
	if err := hubapi.CheckTenantID(id); err != nil {
		return hubapi.Tenant{}, err
	}
	t, err := s.store.GetTenant(ctx, id)
	if err != nil {
		return hubapi.Tenant{}, tenantError(id, err)
	}
	return tenantView(t), nil
}

// Require checks that a tenant an operation acts on is named, well formed
// and exists; an inactive one is fine (the admin may clean it up). As
// checks every tenant the admin names with it, so acting on an unknown
// tenant answers tenant_not_found, rather than an empty list.
func (s *Tenants) Require(ctx context.Context, id string) error {
	_, err := s.Get(ctx, id)
	return err
}

// List pages through the tenants in id order.
func (s *Tenants) List(ctx context.Context, p hubapi.ListParams) (hubapi.Page[hubapi.Tenant], error) {
	limit, err := pageLimit(p.Limit)
	if err != nil {
		return hubapi.Page[hubapi.Tenant]{}, err
	}
	after := ""
	if p.Cursor != "" {
		if after, err = decodeCursor(tenantsCursor, p.Cursor); err != nil {
			return hubapi.Page[hubapi.Tenant]{}, err
		}
	}
	rows, more, err := s.store.ListTenants(ctx, after, limit)
	if err != nil {
		return hubapi.Page[hubapi.Tenant]{}, err
	}
	return pageOf(rows, more, tenantView, tenantsCursor, func(last catalog.Tenant) string { return last.ID }), nil
}

// SetStatus makes a tenant active or inactive. Ingest instances see the
// change within STREAMING_HUB_ROSTER_REFRESH. Setting the status a tenant
// already has succeeds and changes nothing.
func (s *Tenants) SetStatus(ctx context.Context, id, status string) (hubapi.Tenant, error) {
	if err := hubapi.CheckTenantID(id); err != nil {
		return hubapi.Tenant{}, err
	}
	if status != hubapi.TenantActive && status != hubapi.TenantInactive {
		return hubapi.Tenant{}, invalid("status", "invalid status %q: must be %s or %s", status, hubapi.TenantActive, hubapi.TenantInactive)
	}
	t, err := s.store.SetTenantStatus(ctx, id, catalog.TenantStatus(status), s.now())
	if err != nil {
		return hubapi.Tenant{}, tenantError(id, err)
	}
	return tenantView(t), nil
}

// Purge removes every stored row of one tenant, the tenant included
// (lifecycle.PurgeTenant lists them), once none of its deliveries is in
// flight: when it returns, nothing of the tenant is sent or stored.
// Nothing of another tenant is touched.
func (s *Tenants) Purge(ctx context.Context, id string) (hubapi.TenantPurgeResult, error) {
	if err := hubapi.CheckTenantID(id); err != nil {
		return hubapi.TenantPurgeResult{}, err
	}
	counts, err := s.purges.PurgeTenant(ctx, id, s.now)
	if err != nil {
		return hubapi.TenantPurgeResult{}, tenantError(id, err)
	}
	out := hubapi.TenantPurgeResult{Tenant: id, Removed: make([]hubapi.PurgedTable, 0, len(counts))}
	for _, c := range counts {
		out.Removed = append(out.Removed, hubapi.PurgedTable{Table: c.Table, Rows: c.Rows})
	}
	return out, nil
}
