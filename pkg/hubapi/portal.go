package hubapi

import "time"

// Portal sign-in links (SPEC §10, docs/api.md Portal).
const (
	// DefaultPortalLinkTTL is how long a link, and the session it opens,
	// lasts when the request names no ttl.
	DefaultPortalLinkTTL = time.Hour
	// MaxPortalLinkTTL bounds a link's life, and with it a session's: a
	// week, after which the holder asks for a new link.
	MaxPortalLinkTTL = 168 * time.Hour
	// CodePortalDisabled answers a link asked of a hub whose portal is off
	// (STREAMING_HUB_PORTAL_ENABLED=false).
	CodePortalDisabled = "portal_disabled"
)

// PortalLinkCreate is the optional body of the portal-link endpoints.
type PortalLinkCreate struct {
	// TTL is a Go duration such as "30m"; "" means DefaultPortalLinkTTL.
	TTL string `json:"ttl,omitempty"`
	// ReadOnly opens a session that sees everything and changes nothing.
	ReadOnly bool `json:"read_only,omitempty"`
}

// PortalLink is a single-use sign-in link: the only time its token, in
// URL, is shown.
type PortalLink struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
	ReadOnly  bool      `json:"read_only"`
}

// PortalSessionsEnded says how many live portal sessions of a tenant
// ending them ended.
type PortalSessionsEnded struct {
	Tenant string `json:"tenant"`
	Ended  int64  `json:"ended"`
}
