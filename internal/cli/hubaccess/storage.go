package hubaccess

import (
	"context"

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

func (d *direct) StorageStatus(ctx context.Context) (hubapi.StorageStatus, error) {
	return d.cp.Storage.Status(ctx)
}

func (d *direct) PruneStorage(ctx context.Context, dryRun bool) (hubapi.StoragePruneResult, error) {
	return d.cp.Storage.Prune(ctx, dryRun)
}

func (d *direct) PurgeTenant(ctx context.Context, id string) (hubapi.TenantPurgeResult, error) {
	return d.cp.Tenants.Purge(ctx, id)
}
