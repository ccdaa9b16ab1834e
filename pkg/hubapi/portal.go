package hubapi

import (
	"errors"
	"fmt"
	"time"
)

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

// Refusals of portal sign-in. Neither tells its causes apart: a link never
// issued, used, expired or of a tenant since deactivated looks the same,
// so the answer helps no guesser.
var (
	ErrPortalLinkInvalid    = errors.New("this sign-in link is not valid: it was used already, it expired, or its tenant is inactive; ask for a new link")
	ErrPortalSessionInvalid = errors.New("the portal session ended or expired; sign in again with a new link")
)

// ParsePortalLinkTTL reads a link's requested life: "" is the default,
// and anything outside (0, MaxPortalLinkTTL] is refused with the rule.
func ParsePortalLinkTTL(text string) (time.Duration, error) {
	if text == "" {
		return DefaultPortalLinkTTL, nil
	}
	ttl, err := time.ParseDuration(text)
	if err != nil || ttl <= 0 || ttl > MaxPortalLinkTTL {
		return 0, &ValidationError{Field: "ttl", Code: CodeInvalidRequest,
			Message: fmt.Sprintf("invalid ttl %q: a duration such as 30m or 24h, more than 0 and at most %dh", text, int(MaxPortalLinkTTL.Hours()))}
	}
	return ttl, nil
}
