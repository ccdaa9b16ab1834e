package api

import (
	"net/http"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// The dead-letter handlers (docs/concepts.md, Dead letters and poison;
// docs/api.md). Like every /v1 handler they pass the tenant the request
// names to the caller's use cases, which scope the selection to the tenant
// the caller may act on: another tenant's dead letters are never listed,
// counted or replayed, and naming one of their ids selects nothing.

// deadLetterRoutes registers the dead-letter endpoints, one line each.
func (s *Server) deadLetterRoutes() {
	s.handleTenant("GET /v1/dead-letters", s.listDeadLetters)
	s.handleTenant("POST /v1/dead-letters/replay", s.replayDeadLetters)
}

func (s *Server) listDeadLetters(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	q := r.URL.Query()
	page, err := listParams(q)
	if err != nil {
		return err
	}
	params := hubapi.DeadLetterListParams{ListParams: page}
	// In a fixed order, so a request with several bad filters always
	// names the same one.
	for _, filter := range []struct {
		name string
		dst  *string
	}{
		{"subscription_id", &params.SubscriptionID},
		{"reason", &params.Reason},
		{"since", &params.Since},
		{"until", &params.Until},
	} {
		if *filter.dst, err = filterParam(q, filter.name); err != nil {
			return err
		}
	}
	letters, err := hub.ListDeadLetters(r.Context(), tenant, params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, letters)
	return nil
}

func (s *Server) replayDeadLetters(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	var body hubapi.DeadLetterReplay
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	result, err := hub.ReplayDeadLetters(r.Context(), tenant, body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, result)
	return nil
}
