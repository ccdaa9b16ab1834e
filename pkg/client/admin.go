package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// The admin API (docs/api.md) takes the admin token.

// CreateTenant adds an active tenant: POST /admin/tenants.
func (c *Client) CreateTenant(ctx context.Context, id string) (hubapi.Tenant, error) {
	var out hubapi.Tenant
	err := c.call(ctx, http.MethodPost, "/admin/tenants", nil, hubapi.TenantCreate{ID: id}, &out)
	return out, err
}

// ListTenants pages through the tenants in id order: GET /admin/tenants.
func (c *Client) ListTenants(ctx context.Context, p hubapi.ListParams) (hubapi.Page[hubapi.Tenant], error) {
	var out hubapi.Page[hubapi.Tenant]
	err := c.call(ctx, http.MethodGet, "/admin/tenants", pageQuery(p), nil, &out)
	return out, err
}

// GetTenant reads one tenant: GET /admin/tenants/{id}.
func (c *Client) GetTenant(ctx context.Context, id string) (hubapi.Tenant, error) {
	var out hubapi.Tenant
	path, err := tenantPath(id)
	if err != nil {
		return out, err
	}
	err = c.call(ctx, http.MethodGet, path, nil, nil, &out)
	return out, err
}

// SetTenantStatus makes a tenant "active" or "inactive":
// PATCH /admin/tenants/{id}.
func (c *Client) SetTenantStatus(ctx context.Context, id, status string) (hubapi.Tenant, error) {
	var out hubapi.Tenant
	path, err := tenantPath(id)
	if err != nil {
		return out, err
	}
	err = c.call(ctx, http.MethodPatch, path, nil, hubapi.TenantUpdate{Status: &status}, &out)
	return out, err
}

// CreateAPIKey issues a key for a tenant: POST /admin/tenants/{id}/keys.
// The answer's Key is the token, which the hub never shows again.
func (c *Client) CreateAPIKey(ctx context.Context, tenantID, name string) (hubapi.CreatedAPIKey, error) {
	var out hubapi.CreatedAPIKey
	path, err := tenantPath(tenantID)
	if err != nil {
		return out, err
	}
	err = c.call(ctx, http.MethodPost, path+"/keys", nil, hubapi.APIKeyCreate{Name: name}, &out)
	return out, err
}

// ListAPIKeys pages through a tenant's keys, revoked ones included:
// GET /admin/tenants/{id}/keys.
func (c *Client) ListAPIKeys(ctx context.Context, tenantID string, p hubapi.ListParams) (hubapi.Page[hubapi.APIKey], error) {
	var out hubapi.Page[hubapi.APIKey]
	path, err := tenantPath(tenantID)
	if err != nil {
		return out, err
	}
	err = c.call(ctx, http.MethodGet, path+"/keys", pageQuery(p), nil, &out)
	return out, err
}

// RevokeAPIKey stops a key from authenticating and returns it with its
// revocation time: DELETE /admin/tenants/{id}/keys/{key_id}.
func (c *Client) RevokeAPIKey(ctx context.Context, tenantID, keyID string) (hubapi.APIKey, error) {
	var out hubapi.APIKey
	path, err := tenantPath(tenantID)
	if err != nil {
		return out, err
	}
	key, err := segment("API key id", keyID)
	if err != nil {
		return out, err
	}
	err = c.call(ctx, http.MethodDelete, path+"/keys/"+key, nil, nil, &out)
	return out, err
}

// ListQuarantine pages through quarantined records: GET /admin/quarantine.
// Each item is a summary of bounded size; GetQuarantined reads one whole.
func (c *Client) ListQuarantine(ctx context.Context, p hubapi.QuarantineListParams) (hubapi.Page[hubapi.QuarantineSummary], error) {
	var out hubapi.Page[hubapi.QuarantineSummary]
	q := pageQuery(p.ListParams)
	setIfNotEmpty(q, "reason", p.Reason)
	setIfNotEmpty(q, "topic", p.Topic)
	err := c.call(ctx, http.MethodGet, "/admin/quarantine", q, nil, &out)
	return out, err
}

// GetQuarantined reads one quarantined record whole, value included:
// GET /admin/quarantine/{id}.
func (c *Client) GetQuarantined(ctx context.Context, id string) (hubapi.QuarantineItem, error) {
	var out hubapi.QuarantineItem
	escaped, err := segment("quarantine id", id)
	if err != nil {
		return out, err
	}
	err = c.call(ctx, http.MethodGet, "/admin/quarantine/"+escaped, nil, nil, &out)
	return out, err
}

func tenantPath(id string) (string, error) {
	escaped, err := segment("tenant id", id)
	if err != nil {
		return "", err
	}
	return "/admin/tenants/" + escaped, nil
}

func setIfNotEmpty(q url.Values, name, value string) {
	if value != "" {
		q.Set(name, value)
	}
}
