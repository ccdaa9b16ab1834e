package hubapi

import "time"

// APIKey is a tenant API key as lists show it: never the token or its
// hash, only the prefix it starts with.
type APIKey struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

// CreatedAPIKey is the API's answer to creating a key: the only time the
// token itself is shown.
type CreatedAPIKey struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Key       string    `json:"key"`
	Prefix    string    `json:"prefix"`
	CreatedAt time.Time `json:"created_at"`
}

// APIKeyCreate is the body of POST /admin/tenants/{id}/keys.
type APIKeyCreate struct {
	Name string `json:"name"`
}
