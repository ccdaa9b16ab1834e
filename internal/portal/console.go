package portal

import (
	"net/http"
	"strings"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// The operator console: a session of the admin, which the service treats
// as the admin token (read-only ones refused every change).

func (h *Handler) consoleRoutes() {
	h.mux.HandleFunc("POST /portal/console/tenants", h.session(h.createTenant))
	h.mux.HandleFunc("POST /portal/console/tenants/{id}/status", h.session(h.setTenantStatus))
	h.mux.HandleFunc("POST /portal/console/tenants/{id}/portal-link", h.session(h.tenantLink))
}

type consolePage struct {
	Tenants []hubapi.Tenant
	Next    string
	Link    *hubapi.PortalLink
	LinkFor string
}

func (h *Handler) console(req *request) error {
	page, err := req.hub.ListTenants(req.r.Context(), hubapi.ListParams{Limit: pageSize, Cursor: req.r.URL.Query().Get("cursor")})
	if err != nil {
		return err
	}
	return h.render(req, "console", consolePage{Tenants: page.Items, Next: nextLink(req.r.URL, page.NextCursor)})
}

func (h *Handler) createTenant(req *request) error {
	if _, err := req.hub.CreateTenant(req.r.Context(), strings.TrimSpace(req.r.PostFormValue("id"))); err != nil {
		return err
	}
	http.Redirect(req.w, req.r, "/portal/", http.StatusSeeOther)
	return nil
}

func (h *Handler) setTenantStatus(req *request) error {
	if _, err := req.hub.SetTenantStatus(req.r.Context(), req.r.PathValue("id"), req.r.PostFormValue("status")); err != nil {
		return err
	}
	http.Redirect(req.w, req.r, "/portal/", http.StatusSeeOther)
	return nil
}

// tenantLink issues a tenant's sign-in link and shows it once, above the
// tenant list.
func (h *Handler) tenantLink(req *request) error {
	tenant := req.r.PathValue("id")
	link, err := req.hub.CreatePortalLink(req.r.Context(), tenant, hubapi.PortalLinkCreate{
		TTL: req.r.PostFormValue("ttl"), ReadOnly: req.r.PostFormValue("read_only") == "true"})
	if err != nil {
		return err
	}
	page, err := req.hub.ListTenants(req.r.Context(), hubapi.ListParams{Limit: pageSize})
	if err != nil {
		return err
	}
	return h.render(req, "console", consolePage{Tenants: page.Items, Next: nextLink(req.r.URL, page.NextCursor), Link: &link, LinkFor: tenant})
}
