package client

import (
	"context"
	"net/http"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// CreatePortalLink issues a single-use portal sign-in link for tenant (""
// for the key's own): POST /v1/portal-links. The admin token reaches the
// same operation with the tenant named, as every /v1 route takes it; POST
// /admin/tenants/{id}/portal-links is its admin-API spelling.
func (c *Client) CreatePortalLink(ctx context.Context, tenant string, in hubapi.PortalLinkCreate) (hubapi.PortalLink, error) {
	var out hubapi.PortalLink
	err := c.on(tenant).call(ctx, http.MethodPost, "/v1/portal-links", nil, in, &out)
	return out, err
}

// CreateConsoleLink issues a sign-in link to the operator console: POST
// /admin/portal-links.
func (c *Client) CreateConsoleLink(ctx context.Context, in hubapi.PortalLinkCreate) (hubapi.PortalLink, error) {
	var out hubapi.PortalLink
	err := c.call(ctx, http.MethodPost, "/admin/portal-links", nil, in, &out)
	return out, err
}

// EndPortalSessions signs every browser of a tenant out of the portal:
// DELETE /admin/tenants/{id}/portal-sessions.
func (c *Client) EndPortalSessions(ctx context.Context, tenant string) (hubapi.PortalSessionsEnded, error) {
	var out hubapi.PortalSessionsEnded
	path, err := tenantPath(tenant)
	if err != nil {
		return out, err
	}
	err = c.call(ctx, http.MethodDelete, path+"/portal-sessions", nil, nil, &out)
	return out, err
}
