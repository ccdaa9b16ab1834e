package api

import (
	"net/http"
	"net/url"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// controlPlaneRoutes registers /admin and /v1, one line per endpoint.
// /admin routes go through handleAdmin, /v1 routes through handleTenant,
// which authenticate before the handler runs.
func (s *Server) controlPlaneRoutes() {
	s.handleAdmin("POST /admin/tenants", s.createTenant)
	s.handleAdmin("GET /admin/tenants", s.listTenants)
	s.handleAdmin("GET /admin/tenants/{id}", s.getTenant)
	s.handleAdmin("PATCH /admin/tenants/{id}", s.updateTenant)
	s.handleAdmin("POST /admin/tenants/{id}/keys", s.createAPIKey)
	s.handleAdmin("GET /admin/tenants/{id}/keys", s.listAPIKeys)
	s.handleAdmin("DELETE /admin/tenants/{id}/keys/{key_id}", s.revokeAPIKey)
	s.handleAdmin("GET /admin/quarantine", s.listQuarantine)
	s.handleAdmin("GET /admin/quarantine/{id}", s.getQuarantined)
	s.storageRoutes()
	s.portalRoutes()

	s.handleTenant("POST /v1/subscriptions", s.createSubscription)
	s.handleTenant("GET /v1/subscriptions", s.listSubscriptions)
	s.handleTenant("GET /v1/subscriptions/{id}", s.getSubscription)
	s.handleTenant("PATCH /v1/subscriptions/{id}", s.updateSubscription)
	s.handleTenant("DELETE /v1/subscriptions/{id}", s.deleteSubscription)
	s.handleTenant("POST /v1/subscriptions/{id}/verify", s.verifySubscription)
	s.handleTenant("POST /v1/subscriptions/{id}/rotate-secret", s.rotateSubscriptionSecret)
	s.handleTenant("POST /v1/subscriptions/{id}/enable", s.enableSubscription)
	s.handleTenant("POST /v1/subscriptions/{id}/disable", s.disableSubscription)
	s.handleTenant("GET /v1/subscriptions/{id}/deliveries", s.listSubscriptionDeliveries)
	s.handleTenant("GET /v1/subscriptions/{id}/latency", s.attemptLatency)
	s.recoverRoutes()
	s.handleTenant("GET /v1/deliveries/{id}", s.getDelivery)
	s.handleTenant("GET /v1/delivery-counts", s.countDeliveries)
	s.deadLetterRoutes()
	s.inboxRoutes()
	s.handleTenant("GET /v1/events", s.readEvents)
}

func (s *Server) createTenant(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	var body hubapi.TenantCreate
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	tenant, err := hub.CreateTenant(r.Context(), body.ID)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/admin/tenants/"+url.PathEscape(tenant.ID))
	writeJSON(w, http.StatusCreated, tenant)
	return nil
}

func (s *Server) listTenants(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	params, err := listParams(r.URL.Query())
	if err != nil {
		return err
	}
	page, err := hub.ListTenants(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) getTenant(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	tenant, err := hub.GetTenant(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tenant)
	return nil
}

func (s *Server) updateTenant(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	var body hubapi.TenantUpdate
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	// status is the only writable field, so a PATCH without it would be a
	// no-op that hides a client's mistake.
	if body.Status == nil {
		return invalidRequest("status", `status is required: "`+hubapi.TenantActive+`" or "`+hubapi.TenantInactive+`"`)
	}
	tenant, err := hub.SetTenantStatus(r.Context(), r.PathValue("id"), *body.Status)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tenant)
	return nil
}

func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	var body hubapi.APIKeyCreate
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	key, err := hub.CreateAPIKey(r.Context(), r.PathValue("id"), body.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, key)
	return nil
}

func (s *Server) listAPIKeys(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	params, err := listParams(r.URL.Query())
	if err != nil {
		return err
	}
	page, err := hub.ListAPIKeys(r.Context(), r.PathValue("id"), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// revokeAPIKey answers 200 with the revoked key, so the caller sees when it
// stopped working; revoking twice is not an error.
func (s *Server) revokeAPIKey(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	key, err := hub.RevokeAPIKey(r.Context(), r.PathValue("id"), r.PathValue("key_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, key)
	return nil
}

func (s *Server) listQuarantine(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	q := r.URL.Query()
	page, err := listParams(q)
	if err != nil {
		return err
	}
	params := hubapi.QuarantineListParams{ListParams: page}
	if params.Reason, err = filterParam(q, "reason"); err != nil {
		return err
	}
	if params.Topic, err = filterParam(q, "topic"); err != nil {
		return err
	}
	items, err := hub.ListQuarantine(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, items)
	return nil
}

// getQuarantined answers one quarantined record whole: the one way to read a
// value, so that listings stay small whatever was quarantined.
func (s *Server) getQuarantined(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	item, err := hub.GetQuarantined(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, item)
	return nil
}
