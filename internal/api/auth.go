package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/service"
)

// HeaderTenantID names the tenant the admin token acts on in /v1.
const HeaderTenantID = "X-Tenant-Id"

// Who authenticated a request, as the access log shows it.
const (
	authAdmin  = "admin"
	authAPIKey = "api_key"
)

// Bearer challenges of RFC 6750: the bare one when no credentials came,
// invalid_token when the ones that came are no good.
const (
	challengeMissing = `Bearer realm="hubctl"`
	challengeInvalid = `Bearer realm="hubctl", error="invalid_token"`
)

var (
	errNoCredentials = &apiError{status: http.StatusUnauthorized, code: CodeUnauthorized, challenge: challengeMissing,
		message: "authentication required: send Authorization: Bearer <token>"}
	errMalformedCredentials = &apiError{status: http.StatusUnauthorized, code: CodeUnauthorized, challenge: challengeInvalid,
		message: "malformed Authorization header: expected Bearer <token>"}
	errInvalidToken = &apiError{status: http.StatusUnauthorized, code: CodeUnauthorized, challenge: challengeInvalid,
		message: "invalid or revoked token"}
	errAdminDisabled = &apiError{status: http.StatusForbidden, code: CodeForbidden,
		message: "the admin API is disabled on this hub: set STREAMING_HUB_ADMIN_TOKEN to enable it"}
	errTenantKeyOnAdmin = &apiError{status: http.StatusForbidden, code: CodeForbidden,
		message: "a tenant API key cannot call the admin API; use the admin token"}
	errTenantInactive = &apiError{status: http.StatusForbidden, code: CodeForbidden,
		message: "the tenant of this API key is inactive"}
	errTenantHeaderWithKey = &apiError{status: http.StatusForbidden, code: CodeForbidden,
		message: "an API key acts on its own tenant only; " + HeaderTenantID + " is for the admin token"}
)

// bearerToken extracts the token of an Authorization header. The scheme
// is case-insensitive (RFC 9110); anything but one non-empty token after it
// is malformed.
func bearerToken(authorization string) (string, error) {
	if authorization == "" {
		return "", errNoCredentials
	}
	scheme, token, found := strings.Cut(authorization, " ")
	token = strings.TrimLeft(token, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", errMalformedCredentials
	}
	return token, nil
}

// isAdminToken compares in constant time, and never matches while the
// admin API is disabled: an empty expected token would otherwise match an
// empty one.
func (s *Server) isAdminToken(token string) bool {
	return s.opts.AdminToken != "" && crypto.ConstantTimeEqual(token, s.opts.AdminToken)
}

// authenticateAdmin lets through only the admin token.
func (s *Server) authenticateAdmin(r *http.Request) error {
	if s.opts.AdminToken == "" {
		return errAdminDisabled
	}
	token, err := bearerToken(r.Header.Get("Authorization"))
	if err != nil {
		return err
	}
	if s.isAdminToken(token) {
		infoFrom(r.Context()).auth = authAdmin
		return nil
	}
	// A tenant key here is a mistake worth naming, rather than calling a
	// genuine key invalid.
	_, err = s.opts.ControlPlane.APIKeys.Authenticate(r.Context(), token)
	switch {
	case err == nil, errors.Is(err, service.ErrTenantInactive):
		return errTenantKeyOnAdmin
	case errors.Is(err, service.ErrInvalidAPIKey):
		return errInvalidToken
	}
	return err
}

// authenticateTenant returns the tenant a /v1 request acts on: a key's own
// tenant, or the one the admin token names in X-Tenant-Id.
func (s *Server) authenticateTenant(r *http.Request) (string, error) {
	token, err := bearerToken(r.Header.Get("Authorization"))
	if err != nil {
		return "", err
	}
	info := infoFrom(r.Context())
	named := r.Header.Values(HeaderTenantID)

	if s.isAdminToken(token) {
		if len(named) != 1 || named[0] == "" {
			return "", invalidRequest(HeaderTenantID, "the admin token acts on the tenant named by exactly one "+HeaderTenantID+" header")
		}
		tenantID := named[0]
		if service.CheckTenantID(tenantID) != nil {
			return "", invalidRequest(HeaderTenantID, "invalid "+HeaderTenantID+": must match "+service.TenantIDRule)
		}
		// The admin may act on an inactive tenant (to clean up, say), but
		// not on one that does not exist.
		if err := s.opts.ControlPlane.Tenants.Require(r.Context(), tenantID); err != nil {
			return "", err
		}
		info.auth, info.tenant = authAdmin, tenantID
		return tenantID, nil
	}

	holder, err := s.opts.ControlPlane.APIKeys.Authenticate(r.Context(), token)
	switch {
	case errors.Is(err, service.ErrInvalidAPIKey):
		return "", errInvalidToken
	case errors.Is(err, service.ErrTenantInactive):
		return "", errTenantInactive
	case err != nil:
		return "", err
	}
	for _, id := range named {
		if id != holder.TenantID {
			return "", errTenantHeaderWithKey
		}
	}
	info.auth, info.tenant = authAPIKey, holder.TenantID
	return holder.TenantID, nil
}

// handlerFunc serves a route; the error it returns is answered by
// respondError.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// tenantHandlerFunc serves a /v1 route for the tenant the request acts on.
type tenantHandlerFunc func(w http.ResponseWriter, r *http.Request, tenantID string) error

// handlePublic registers a route anyone may call.
func (s *Server) handlePublic(pattern string, h handlerFunc) {
	s.handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.respondError(w, r, err)
		}
	}))
}

// handleAdmin registers an /admin route: the admin token only. A POST with
// an Idempotency-Key runs once per key (idempotent).
func (s *Server) handleAdmin(pattern string, h handlerFunc) {
	s.handlePublic(pattern, func(w http.ResponseWriter, r *http.Request) error {
		if err := s.authenticateAdmin(r); err != nil {
			return err
		}
		if err := checkQuery(r); err != nil {
			return err
		}
		return s.idempotent(w, r, scopeAdmin, "", h)
	})
}

// handleTenant registers a /v1 route: a tenant key, or the admin token with
// X-Tenant-Id. h sees only the tenant id, so it cannot reach beyond it by
// accident; every lookup it makes must be scoped to that tenant, so another
// tenant's resource answers 404 like a missing one. A POST with an
// Idempotency-Key runs once per key and caller (idempotent).
func (s *Server) handleTenant(pattern string, h tenantHandlerFunc) {
	s.handlePublic(pattern, func(w http.ResponseWriter, r *http.Request) error {
		tenantID, err := s.authenticateTenant(r)
		if err != nil {
			return err
		}
		if err := checkQuery(r); err != nil {
			return err
		}
		scope := tenantScope(tenantID)
		if infoFrom(r.Context()).auth == authAdmin {
			scope = scopeAdmin
		}
		return s.idempotent(w, r, scope, tenantID, func(w http.ResponseWriter, r *http.Request) error {
			return h(w, r, tenantID)
		})
	})
}
