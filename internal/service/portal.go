package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/store/pg"
	portalstore "github.com/hubctl/hubctl/internal/store/portal"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Prefixes of the portal's tokens, so a leaked one is recognisable (as
// API keys' hub_ is) and one is never mistaken for the other.
const (
	portalLinkPrefix    = "hpl_"
	portalSessionPrefix = "hps_"
	// PortalSignInPath is where a link lands; the token is its query's
	// token parameter.
	PortalSignInPath = "/portal/sign-in"
	// maxPortalTokenLength bounds what is worth hashing and looking up: a
	// token is 47 characters.
	maxPortalTokenLength = 64
)

// PortalOptions are the portal's settings (SPEC §10).
type PortalOptions struct {
	// Enabled is STREAMING_HUB_PORTAL_ENABLED; links are refused when off.
	Enabled bool
	// BaseURL is what links start with: STREAMING_HUB_PUBLIC_URL, or the
	// listener's address (config.Config.PortalBaseURL).
	BaseURL string
}

// Portal issues sign-in links and turns them into browser sessions.
type Portal struct {
	store *portalstore.Store
	now   func() time.Time
	opts  PortalOptions
}

// NewPortal returns the portal use cases over st.
func NewPortal(st *portalstore.Store, now func() time.Time, opts PortalOptions) *Portal {
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	return &Portal{store: st, now: now, opts: opts}
}

// Enabled reports whether the hub serves the portal.
func (p *Portal) Enabled() bool { return p.opts.Enabled }

// CreateLink issues a link for tenant, or for the operator console when
// tenant is "". The token is in the answer's URL and nowhere else.
func (p *Portal) CreateLink(ctx context.Context, tenant string, in hubapi.PortalLinkCreate) (hubapi.PortalLink, error) {
	ttl, err := hubapi.ParsePortalLinkTTL(in.TTL)
	if err != nil {
		return hubapi.PortalLink{}, err
	}
	if !p.opts.Enabled {
		return hubapi.PortalLink{}, &hubapi.ConflictError{Code: hubapi.CodePortalDisabled,
			Message: "the portal is turned off on this hub (STREAMING_HUB_PORTAL_ENABLED=false)"}
	}
	token, hash, err := newPortalToken(portalLinkPrefix)
	if err != nil {
		return hubapi.PortalLink{}, err
	}
	now := p.now().UTC().Truncate(time.Microsecond)
	link := portalstore.NewLink{TokenHash: hash, Tenant: tenant, ReadOnly: in.ReadOnly, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	if err := p.store.CreateLink(ctx, link); err != nil {
		return hubapi.PortalLink{}, tenantError(tenant, err)
	}
	return hubapi.PortalLink{
		URL:       p.opts.BaseURL + PortalSignInPath + "?token=" + token,
		ExpiresAt: link.ExpiresAt,
		ReadOnly:  in.ReadOnly,
	}, nil
}

// PortalSignIn is a session a link opened: the cookie to give the browser
// (shown this once), who it is, and when it ends.
type PortalSignIn struct {
	Cookie    string
	Caller    hubapi.Caller
	ExpiresAt time.Time
}

// Redeem spends a link's token and opens its session.
// hubapi.ErrPortalLinkInvalid when the token cannot be spent.
func (p *Portal) Redeem(ctx context.Context, linkToken string) (PortalSignIn, error) {
	if !plausiblePortalToken(portalLinkPrefix, linkToken) {
		return PortalSignIn{}, hubapi.ErrPortalLinkInvalid
	}
	cookie, cookieHash, err := newPortalToken(portalSessionPrefix)
	if err != nil {
		return PortalSignIn{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return PortalSignIn{}, fmt.Errorf("new portal session id: %w", err)
	}
	s, err := p.store.RedeemLink(ctx, hashPortalToken(linkToken), portalstore.NewSession{ID: id.String(), TokenHash: cookieHash}, p.now())
	if errors.Is(err, pg.ErrNotFound) {
		return PortalSignIn{}, hubapi.ErrPortalLinkInvalid
	}
	if err != nil {
		return PortalSignIn{}, err
	}
	return PortalSignIn{Cookie: cookie, Caller: sessionCaller(s), ExpiresAt: s.ExpiresAt}, nil
}

// Authenticate says who a session cookie is, and until when.
// hubapi.ErrPortalSessionInvalid when it is no live session.
func (p *Portal) Authenticate(ctx context.Context, cookie string) (hubapi.Caller, time.Time, error) {
	if !plausiblePortalToken(portalSessionPrefix, cookie) {
		return hubapi.Caller{}, time.Time{}, hubapi.ErrPortalSessionInvalid
	}
	s, err := p.store.Session(ctx, hashPortalToken(cookie), p.now())
	if errors.Is(err, pg.ErrNotFound) {
		return hubapi.Caller{}, time.Time{}, hubapi.ErrPortalSessionInvalid
	}
	if err != nil {
		return hubapi.Caller{}, time.Time{}, err
	}
	return sessionCaller(s), s.ExpiresAt, nil
}

// SignOut ends the session of cookie; an unknown cookie is no error.
func (p *Portal) SignOut(ctx context.Context, cookie string) error {
	if !plausiblePortalToken(portalSessionPrefix, cookie) {
		return nil
	}
	return p.store.EndSession(ctx, hashPortalToken(cookie), p.now())
}

// EndSessions ends every live session of a tenant.
func (p *Portal) EndSessions(ctx context.Context, tenant string) (hubapi.PortalSessionsEnded, error) {
	n, err := p.store.EndTenantSessions(ctx, tenant, p.now())
	if err != nil {
		return hubapi.PortalSessionsEnded{}, err
	}
	return hubapi.PortalSessionsEnded{Tenant: tenant, Ended: n}, nil
}

// sessionCaller is the caller a session acts as: a tenant's portal
// session, or the operator's console (the admin, with a session).
func sessionCaller(s portalstore.Session) hubapi.Caller {
	if s.Tenant == "" {
		return hubapi.Caller{Kind: hubapi.CallerAdmin, Session: s.ID, ReadOnly: s.ReadOnly}
	}
	return hubapi.PortalSession(s.Tenant, s.ID, s.ReadOnly)
}

// newPortalToken returns 256 random bits behind prefix, and the hash to
// store in its place.
func newPortalToken(prefix string) (token string, hash []byte, err error) {
	random := make([]byte, 32)
	if _, err := rand.Read(random); err != nil {
		return "", nil, fmt.Errorf("random portal token: %w", err)
	}
	token = prefix + base64.RawURLEncoding.EncodeToString(random)
	return token, hashPortalToken(token), nil
}

// hashPortalToken is a fast hash, as for API keys: the tokens carry 256
// random bits, which no hash speed makes guessable.
func hashPortalToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// plausiblePortalToken turns away, without a database round trip, what no
// token of the kind could be.
func plausiblePortalToken(prefix, token string) bool {
	return strings.HasPrefix(token, prefix) && len(token) <= maxPortalTokenLength
}

// RedeemPortalLink is Portal.Redeem for front ends that know the control
// plane only: the cookie to set, who it signs in, and until when.
func (c *ControlPlane) RedeemPortalLink(ctx context.Context, token string) (cookie string, caller hubapi.Caller, expires time.Time, err error) {
	in, err := c.Portal.Redeem(ctx, token)
	return in.Cookie, in.Caller, in.ExpiresAt, err
}

// AuthenticatePortal is Portal.Authenticate.
func (c *ControlPlane) AuthenticatePortal(ctx context.Context, cookie string) (hubapi.Caller, time.Time, error) {
	return c.Portal.Authenticate(ctx, cookie)
}

// SignOutPortal is Portal.SignOut.
func (c *ControlPlane) SignOutPortal(ctx context.Context, cookie string) error {
	return c.Portal.SignOut(ctx, cookie)
}
