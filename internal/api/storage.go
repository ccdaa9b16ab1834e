package api

import (
	"net/http"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// storageRoutes are the admin routes of the storage lifecycle: what is
// stored and what retention removes, and removing one tenant entirely.
func (s *Server) storageRoutes() {
	s.handleAdmin("GET /admin/storage", s.storageStatus)
	s.handleAdmin("POST /admin/storage/prune", s.storagePrune)
	s.handleAdmin("DELETE /admin/tenants/{id}", s.purgeTenant)
}

func (s *Server) storageStatus(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	st, err := hub.StorageStatus(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (s *Server) storagePrune(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	var body hubapi.StoragePruneRequest
	if err := decodeOptionalJSON(r, &body); err != nil {
		return err
	}
	res, err := hub.PruneStorage(r.Context(), body.DryRun)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// purgeTenant deletes a tenant with every row it has. Deleting is never
// implied: without purge=true the request is refused, so a client that
// meant something milder (deactivating: PATCH status) loses nothing.
func (s *Server) purgeTenant(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane) error {
	if r.URL.Query().Get("purge") != "true" {
		return invalidRequest("purge", "deleting a tenant removes every row it has; confirm with ?purge=true (to stop its traffic only, PATCH its status to inactive)")
	}
	res, err := hub.PurgeTenant(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
