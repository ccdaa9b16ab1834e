package portal

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// The operator console: a session of the admin, which the service treats
// as the admin token (read-only ones refused every change). A tenant's
// session reaching these pages is refused by the service, as on the API.

func (h *Handler) consoleRoutes() {
	h.mux.HandleFunc("POST /portal/console/tenants", h.session(h.createTenant))
	h.mux.HandleFunc("POST /portal/console/tenants/{id}/status", h.session(h.setTenantStatus))
	h.mux.HandleFunc("POST /portal/console/tenants/{id}/portal-link", h.session(h.tenantLink))
	h.mux.HandleFunc("GET /portal/console/tenants/{id}/keys", h.session(h.keys))
	h.mux.HandleFunc("POST /portal/console/tenants/{id}/keys", h.session(h.createKey))
	h.mux.HandleFunc("POST /portal/console/tenants/{id}/keys/{key}/revoke", h.session(h.revokeKey))
	h.mux.HandleFunc("GET /portal/console/quarantine", h.session(h.quarantine))
	h.mux.HandleFunc("GET /portal/console/quarantine/{id}", h.session(h.quarantined))
	h.mux.HandleFunc("GET /portal/console/storage", h.session(h.storage))
	h.mux.HandleFunc("POST /portal/console/storage/prune", h.session(h.pruneDryRun))
}

type keysPage struct {
	Tenant string
	Keys   []hubapi.APIKey
	Next   string
	// Created is a key just issued, its token shown this once.
	Created *hubapi.CreatedAPIKey
}

func (h *Handler) keys(req *request) error {
	return h.renderKeys(req, nil)
}

func (h *Handler) renderKeys(req *request, created *hubapi.CreatedAPIKey) error {
	tenant := req.r.PathValue("id")
	page, err := req.hub.ListAPIKeys(req.r.Context(), tenant, hubapi.ListParams{Limit: pageSize, Cursor: req.r.URL.Query().Get("cursor")})
	if err != nil {
		return err
	}
	return h.render(req, "keys", keysPage{Tenant: tenant, Keys: page.Items, Next: nextLink(req.r.URL, page.NextCursor), Created: created})
}

func (h *Handler) createKey(req *request) error {
	key, err := req.hub.CreateAPIKey(req.r.Context(), req.r.PathValue("id"), strings.TrimSpace(req.r.PostFormValue("name")))
	if err != nil {
		return err
	}
	return h.renderKeys(req, &key)
}

func (h *Handler) revokeKey(req *request) error {
	tenant := req.r.PathValue("id")
	if _, err := req.hub.RevokeAPIKey(req.r.Context(), tenant, req.r.PathValue("key")); err != nil {
		return err
	}
	http.Redirect(req.w, req.r, "/portal/console/tenants/"+url.PathEscape(tenant)+"/keys", http.StatusSeeOther)
	return nil
}

type quarantinePage struct {
	Items []hubapi.QuarantineSummary
	Next  string
}

func (h *Handler) quarantine(req *request) error {
	page, err := req.hub.ListQuarantine(req.r.Context(), hubapi.QuarantineListParams{
		ListParams: hubapi.ListParams{Limit: pageSize, Cursor: req.r.URL.Query().Get("cursor")}})
	if err != nil {
		return err
	}
	return h.render(req, "quarantine", quarantinePage{Items: page.Items, Next: nextLink(req.r.URL, page.NextCursor)})
}

func (h *Handler) quarantined(req *request) error {
	item, err := req.hub.GetQuarantined(req.r.Context(), req.r.PathValue("id"))
	if err != nil {
		return err
	}
	return h.render(req, "quarantined", item)
}

type storagePage struct {
	Status hubapi.StorageStatus
	// Prune is a dry run's answer, nil until asked for.
	Prune *hubapi.StoragePruneResult
}

func (h *Handler) storage(req *request) error {
	status, err := req.hub.StorageStatus(req.r.Context())
	if err != nil {
		return err
	}
	return h.render(req, "storage", storagePage{Status: status})
}

// pruneDryRun shows what a prune would remove; pruning itself stays with
// serve's schedule and hubctl storage prune.
func (h *Handler) pruneDryRun(req *request) error {
	ctx := req.r.Context()
	res, err := req.hub.PruneStorage(ctx, true)
	if err != nil {
		return err
	}
	status, err := req.hub.StorageStatus(ctx)
	if err != nil {
		return err
	}
	return h.render(req, "storage", storagePage{Status: status, Prune: &res})
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
