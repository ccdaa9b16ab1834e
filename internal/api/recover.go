package api

import (
	"net/http"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

func (s *Server) recoverRoutes() {
	s.handleTenant("POST /v1/subscriptions/{id}/recover", s.recoverSubscription)
}

// recoverSubscription queues again what a subscription missed in a time
// range (docs/api.md, Recover).
func (s *Server) recoverSubscription(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	var body hubapi.SubscriptionRecover
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	result, err := hub.RecoverSubscription(r.Context(), tenant, r.PathValue("id"), body, nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, result)
	return nil
}
