package api

import (
	"net/http"
	"strings"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// The handlers of a subscription's deliveries and of one delivery (docs/api.md). Like the subscription handlers, they pass the tenant the
// request names to the caller's use cases, which scope every lookup to the
// tenant the caller may act on: another
// tenant's subscription or delivery, or an id that is not a UUID, answers
// 404 exactly like a missing one.

func (s *Server) listSubscriptionDeliveries(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	q := r.URL.Query()
	page, err := listParams(q)
	if err != nil {
		return err
	}
	params := hubapi.DeliveryListParams{ListParams: page}
	if params.State, err = filterParam(q, "state"); err != nil {
		return err
	}
	if params.Since, err = filterParam(q, "since"); err != nil {
		return err
	}
	if params.Until, err = filterParam(q, "until"); err != nil {
		return err
	}
	deliveries, err := hub.ListDeliveries(r.Context(), tenant, r.PathValue("id"), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, deliveries)
	return nil
}

func (s *Server) countDeliveries(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	list, _, err := singleParam(r.URL.Query(), "subscription_ids")
	if err != nil {
		return err
	}
	var ids []string
	if list != "" {
		ids = strings.Split(list, ",")
	}
	counts, err := hub.CountDeliveries(r.Context(), tenant, ids)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, counts)
	return nil
}

func (s *Server) attemptLatency(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	latency, err := hub.AttemptLatency(r.Context(), tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, latency)
	return nil
}

func (s *Server) getDelivery(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	delivery, err := hub.GetDelivery(r.Context(), tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, delivery)
	return nil
}
