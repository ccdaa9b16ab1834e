package catalog

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// TenantStatus is a tenant's place in the roster (docs/concepts.md, Tenants). Ingest admits
// events only for active tenants.
type TenantStatus string

// The statuses the tenants table allows.
const (
	TenantActive   TenantStatus = "active"
	TenantInactive TenantStatus = "inactive"
)

// Tenant is one row of the roster.
type Tenant struct {
	ID        string
	Status    TenantStatus
	CreatedAt time.Time
	UpdatedAt time.Time
}

func scanTenant(row pgx.Row) (Tenant, error) {
	var t Tenant
	err := row.Scan(&t.ID, &t.Status, &t.CreatedAt, &t.UpdatedAt)
	return t, err
}

// CreateTenant adds an active tenant created at `at`. A tenant that already
// exists is an pg.ErrConflict naming it; the existing row is left untouched.
func (s *Store) CreateTenant(ctx context.Context, id string, at time.Time) (Tenant, error) {
	// ON CONFLICT DO NOTHING rather than catching the unique violation: the
	// violation would abort a surrounding transaction, and "exists" is an
	// expected answer here, not a failure of the statement.
	t, err := scanTenant(s.Pool.QueryRow(ctx, createTenantSQL,
		pgx.StrictNamedArgs{"id": id, "status": TenantActive, "at": at}))
	if errors.Is(err, pgx.ErrNoRows) {
		return Tenant{}, fmt.Errorf("%w: tenant %q already exists", pg.ErrConflict, id)
	}
	if err != nil {
		return Tenant{}, pg.Classify(fmt.Errorf("create tenant %q: %w", id, err))
	}
	return t, nil
}

// GetTenant reads one tenant; pg.ErrNotFound when there is none with that id.
func (s *Store) GetTenant(ctx context.Context, id string) (Tenant, error) {
	t, err := scanTenant(s.Pool.QueryRow(ctx, getTenantSQL, pgx.StrictNamedArgs{"id": id}))
	if errors.Is(err, pgx.ErrNoRows) {
		return Tenant{}, pg.TenantNotFound(id)
	}
	if err != nil {
		return Tenant{}, pg.Classify(fmt.Errorf("read tenant %q: %w", id, err))
	}
	return t, nil
}

// ListTenants returns up to limit tenants in id order, starting after the
// tenant afterID ("" starts at the beginning). more reports whether tenants
// follow the last one returned. Paging by id is stable under concurrent
// inserts: a page never repeats or skips a tenant that existed when the
// listing began.
func (s *Store) ListTenants(ctx context.Context, afterID string, limit int) (tenants []Tenant, more bool, err error) {
	if limit < 1 {
		return nil, false, fmt.Errorf("list tenants: limit %d must be at least 1", limit)
	}
	// One row beyond the page tells whether another page exists without a
	// second query.
	rows, err := s.Pool.Query(ctx, listTenantsSQL,
		pgx.StrictNamedArgs{"after_id": afterID, "limit": limit + 1})
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("list tenants: %w", err))
	}
	tenants, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Tenant, error) { return scanTenant(r) })
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("list tenants: %w", err))
	}
	if len(tenants) > limit {
		return tenants[:limit], true, nil
	}
	return tenants, false, nil
}

// SetTenantStatus moves a tenant to status. updated_at records the last real
// change, so setting the status a tenant already has leaves it alone.
func (s *Store) SetTenantStatus(ctx context.Context, id string, status TenantStatus, at time.Time) (Tenant, error) {
	t, err := scanTenant(s.Pool.QueryRow(ctx, setTenantStatusSQL,
		pgx.StrictNamedArgs{"id": id, "status": status, "at": at}))
	if errors.Is(err, pgx.ErrNoRows) {
		return Tenant{}, pg.TenantNotFound(id)
	}
	if err != nil {
		return Tenant{}, pg.Classify(fmt.Errorf("set status of tenant %q: %w", id, err))
	}
	return t, nil
}

// ListenRoster LISTENs on pg.RosterChannel.
func (s *Store) ListenRoster(ctx context.Context) (*pg.Listener, error) {
	return pg.Listen(ctx, s.Pool, pg.RosterChannel, "roster changes")
}

// LoadRoster returns every tenant's status for the ingest roster gate
// (docs/concepts.md, Tenants). Tenants that are absent are unknown.
func (s *Store) LoadRoster(ctx context.Context) (map[string]event.TenantStatus, error) {
	return s.tenantStatuses(ctx, "load tenant roster", loadRosterSQL)
}

// TenantStatuses answers the roster gate for a few tenants straight from
// the database; a tenant not in the answer is unknown. Ingest asks it
// before discarding a record for its tenant, the one verdict a stale
// roster could make wrongly and for good.
func (s *Store) TenantStatuses(ctx context.Context, ids []string) (map[string]event.TenantStatus, error) {
	return s.tenantStatuses(ctx, "read tenant statuses", tenantStatusesSQL, pgx.StrictNamedArgs{"ids": ids})
}

func (s *Store) tenantStatuses(ctx context.Context, what, sql string, args ...any) (map[string]event.TenantStatus, error) {
	rows, err := s.Pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("%s: %w", what, err))
	}
	statuses := make(map[string]event.TenantStatus)
	var id, status string
	_, err = pgx.ForEachRow(rows, []any{&id, &status}, func() error {
		if status == "active" {
			statuses[id] = event.TenantActive
		} else {
			statuses[id] = event.TenantInactive
		}
		return nil
	})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("%s: %w", what, err))
	}
	return statuses, nil
}

//go:embed sql/create_tenant.sql
var createTenantSQL string

//go:embed sql/get_tenant.sql
var getTenantSQL string

//go:embed sql/list_tenants.sql
var listTenantsSQL string

//go:embed sql/set_tenant_status.sql
var setTenantStatusSQL string

//go:embed sql/load_roster.sql
var loadRosterSQL string

//go:embed sql/tenant_statuses.sql
var tenantStatusesSQL string
