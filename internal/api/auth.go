package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/pkg/hubapi"
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
	_, err = s.opts.ControlPlane.Authenticate(r.Context(), token)
	switch {
	case err == nil, errors.Is(err, hubapi.ErrTenantInactive):
		return errTenantKeyOnAdmin
	case errors.Is(err, hubapi.ErrInvalidAPIKey):
		return errInvalidToken
	}
	return err
}

// tenantRequest is who sent a /v1 request and the tenant it names.
type tenantRequest struct {
	caller hubapi.Caller
	// named is X-Tenant-Id, "" when none came. The use cases judge it:
	// a key naming another tenant, or the admin an unknown one, is
	// refused there.
	named string
}

// authenticateTenant reads who a /v1 request comes from, and the tenant it
// acts on into the request's info: a key's own tenant, or the one the
// admin token names in X-Tenant-Id.
func (s *Server) authenticateTenant(r *http.Request) (tenantRequest, error) {
	token, err := bearerToken(r.Header.Get("Authorization"))
	if err != nil {
		return tenantRequest{}, err
	}
	info := infoFrom(r.Context())
	named := r.Header.Values(HeaderTenantID)

	if s.isAdminToken(token) {
		if len(named) != 1 || named[0] == "" {
			return tenantRequest{}, invalidRequest(HeaderTenantID, "the admin token acts on the tenant named by exactly one "+HeaderTenantID+" header")
		}
		if hubapi.CheckTenantID(named[0]) != nil {
			return tenantRequest{}, invalidRequest(HeaderTenantID, "invalid "+HeaderTenantID+": must match "+hubapi.TenantIDRule)
		}
		info.auth, info.tenant = authAdmin, named[0]
		return tenantRequest{caller: hubapi.Admin(), named: named[0]}, nil
	}

	caller, err := s.opts.ControlPlane.Authenticate(r.Context(), token)
	switch {
	case errors.Is(err, hubapi.ErrInvalidAPIKey):
		return tenantRequest{}, errInvalidToken
	case errors.Is(err, hubapi.ErrTenantInactive):
		return tenantRequest{}, errTenantInactive
	case err != nil:
		return tenantRequest{}, err
	}
	req := tenantRequest{caller: caller}
	if len(named) > 0 {
		req.named = named[0]
	}
	// Headers that disagree name some tenant other than the key's.
	for _, id := range named {
		if id != req.named {
			return tenantRequest{}, errTenantHeaderWithKey
		}
	}
	info.auth, info.tenant = authAPIKey, caller.Tenant
	return req, nil
}

// handlerFunc serves a route; the error it returns is answered by
// respondError.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// adminHandlerFunc serves an /admin route through the admin's use cases.
type adminHandlerFunc func(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error

// tenantHandlerFunc serves a /v1 route through the caller's use cases,
// passing them tenant, the tenant the request names ("" for a key's own).
type tenantHandlerFunc func(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error

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
func (s *Server) handleAdmin(pattern string, h adminHandlerFunc) {
	s.handlePublic(pattern, func(w http.ResponseWriter, r *http.Request) error {
		if err := s.authenticateAdmin(r); err != nil {
			return err
		}
		if err := checkQuery(r); err != nil {
			return err
		}
		hub := s.opts.ControlPlane.As(hubapi.Admin())
		return s.idempotent(w, r, scopeAdmin, "", func(w http.ResponseWriter, r *http.Request) error {
			return h(w, r, hub)
		})
	})
}

// handleTenant registers a /v1 route: a tenant key, or the admin token with
// X-Tenant-Id. h reaches the hub only through the caller's use cases, which
// scope every lookup to the tenant the caller may act on, so another
// tenant's resource answers 404 like a missing one. A POST with an
// Idempotency-Key runs once per key and caller (idempotent).
func (s *Server) handleTenant(pattern string, h tenantHandlerFunc) {
	s.handlePublic(pattern, func(w http.ResponseWriter, r *http.Request) error {
		req, err := s.authenticateTenant(r)
		if err != nil {
			return err
		}
		if err := checkQuery(r); err != nil {
			return err
		}
		actsOn := infoFrom(r.Context()).tenant
		scope := tenantScope(actsOn)
		if req.caller.Kind == hubapi.CallerAdmin {
			scope = scopeAdmin
		}
		hub := s.opts.ControlPlane.As(req.caller)
		return s.idempotent(w, r, scope, actsOn, func(w http.ResponseWriter, r *http.Request) error {
			return h(w, r, hub, req.named)
		})
	})
}
