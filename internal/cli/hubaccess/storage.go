package hubaccess

import (
	"context"
	"time"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Storage is what the storage commands and tenant purge perform.
type Storage interface {
	StorageStatus(ctx context.Context) (hubapi.StorageStatus, error)
	PruneStorage(ctx context.Context, dryRun bool) (hubapi.StoragePruneResult, error)
	PurgeTenant(ctx context.Context, id string) (hubapi.TenantPurgeResult, error)
}

func (r *remote) StorageStatus(ctx context.Context) (hubapi.StorageStatus, error) {
	return r.client.StorageStatus(ctx)
}

func (r *remote) PruneStorage(ctx context.Context, dryRun bool) (hubapi.StoragePruneResult, error) {
	return r.client.PruneStorage(ctx, dryRun)
}

func (r *remote) PurgeTenant(ctx context.Context, id string) (hubapi.TenantPurgeResult, error) {
	return r.client.PurgeTenant(ctx, id)
}

// storage works under this process's configured retention
// (STREAMING_HUB_RETENTION_*), as serve would.
func (d *direct) storage() *service.Storage {
	r := d.cfg.Retention
	return service.NewStorage(d.store, store.RetentionPolicy{Events: r.Events, Deliveries: r.Deliveries, Quarantine: r.Quarantine}, time.Now)
}

func (d *direct) StorageStatus(ctx context.Context) (hubapi.StorageStatus, error) {
	return d.storage().Status(ctx)
}

func (d *direct) PruneStorage(ctx context.Context, dryRun bool) (hubapi.StoragePruneResult, error) {
	return d.storage().Prune(ctx, dryRun)
}

func (d *direct) PurgeTenant(ctx context.Context, id string) (hubapi.TenantPurgeResult, error) {
	return d.tenants.Purge(ctx, id)
}
