package api

import (
	"net/http"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// portalRoutes are the portal's sign-in links (SPEC §10). The portal's
// pages are internal/portal's, mounted beside the API by the assembly.
func (s *Server) portalRoutes() {
	s.handleAdmin("POST /admin/tenants/{id}/portal-links", s.createTenantPortalLink)
	s.handleAdmin("DELETE /admin/tenants/{id}/portal-sessions", s.endPortalSessions)
	s.handleAdmin("POST /admin/portal-links", s.createConsoleLink)
	s.handleTenant("POST /v1/portal-links", s.createPortalLink)
}

func (s *Server) createTenantPortalLink(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	var body hubapi.PortalLinkCreate
	if err := decodeOptionalJSON(r, &body); err != nil {
		return err
	}
	link, err := hub.CreatePortalLink(r.Context(), r.PathValue("id"), body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, link)
	return nil
}

func (s *Server) createConsoleLink(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	var body hubapi.PortalLinkCreate
	if err := decodeOptionalJSON(r, &body); err != nil {
		return err
	}
	link, err := hub.CreateConsoleLink(r.Context(), body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, link)
	return nil
}

func (s *Server) createPortalLink(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	var body hubapi.PortalLinkCreate
	if err := decodeOptionalJSON(r, &body); err != nil {
		return err
	}
	link, err := hub.CreatePortalLink(r.Context(), tenant, body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, link)
	return nil
}

func (s *Server) endPortalSessions(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	ended, err := hub.EndPortalSessions(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ended)
	return nil
}
