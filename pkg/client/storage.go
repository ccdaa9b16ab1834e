package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// StorageStatus reports what the hub stores and what the next prune
// removes: GET /admin/storage.
func (c *Client) StorageStatus(ctx context.Context) (hubapi.StorageStatus, error) {
	var out hubapi.StorageStatus
	err := c.call(ctx, http.MethodGet, "/admin/storage", nil, nil, &out)
	return out, err
}

// PruneStorage runs retention now, or with dryRun only reports what it
// would remove: POST /admin/storage/prune.
func (c *Client) PruneStorage(ctx context.Context, dryRun bool) (hubapi.StoragePruneResult, error) {
	var out hubapi.StoragePruneResult
	err := c.call(ctx, http.MethodPost, "/admin/storage/prune", nil, hubapi.StoragePruneRequest{DryRun: dryRun}, &out)
	return out, err
}

// PurgeTenant removes a tenant and every row it has:
// DELETE /admin/tenants/{id}?purge=true.
func (c *Client) PurgeTenant(ctx context.Context, id string) (hubapi.TenantPurgeResult, error) {
	var out hubapi.TenantPurgeResult
	path, err := tenantPath(id)
	if err != nil {
		return out, err
	}
	err = c.call(ctx, http.MethodDelete, path, url.Values{"purge": {"true"}}, nil, &out)
	return out, err
}
