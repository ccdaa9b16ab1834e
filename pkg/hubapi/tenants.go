package hubapi

import "time"

// Tenant is the API's and CLI's view of a tenant (docs/api.md).
type Tenant struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// TenantCreate is the body of POST /admin/tenants.
type TenantCreate struct {
	ID string `json:"id"`
}

// TenantUpdate is the body of PATCH /admin/tenants/{id}. Status is a
// pointer so the server can tell a body that leaves it out, which it
// refuses, from one that names a status.
type TenantUpdate struct {
	Status *string `json:"status"`
}

// Tenant statuses.
const (
	TenantActive   = "active"
	TenantInactive = "inactive"
)
