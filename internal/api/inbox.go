package api

import (
	"net/http"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// The inbox handlers: support's lookups from what a customer has, an event
// id or a type, source, subject and time. Scoped like every /v1 handler:
// another tenant's event answers 404 exactly like a missing one.

// inboxRoutes registers the inbox endpoints, one line each.
func (s *Server) inboxRoutes() {
	s.handleTenant("GET /v1/inbox", s.listInbox)
	s.handleTenant("GET /v1/inbox/{id}", s.getInboxEvent)
}

func (s *Server) listInbox(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	q := r.URL.Query()
	page, err := listParams(q)
	if err != nil {
		return err
	}
	params := hubapi.EventListParams{ListParams: page}
	// In a fixed order, so a request with several bad filters always
	// names the same one.
	for _, filter := range []struct {
		name string
		dst  *string
	}{
		{"type", &params.Type},
		{"source", &params.Source},
		{"subject", &params.Subject},
		{"since", &params.Since},
		{"until", &params.Until},
	} {
		if *filter.dst, err = filterParam(q, filter.name); err != nil {
			return err
		}
	}
	events, err := hub.ListEvents(r.Context(), tenant, params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, events)
	return nil
}

func (s *Server) getInboxEvent(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	event, err := hub.GetEvent(r.Context(), tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, event)
	return nil
}
