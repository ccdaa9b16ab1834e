package api

import (
	"net/http"
	"net/url"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// The handlers of /v1/subscriptions (docs/concepts.md, Subscriptions; docs/api.md). Each one passes the
// tenant the request names to the caller's use cases, which settle the
// tenant the caller may act on and scope every lookup to it: a subscription of another tenant, or an id that is
// not a UUID, answers 404 subscription_not_found exactly like a missing one.

func (s *Server) createSubscription(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	var body hubapi.SubscriptionCreate
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	// A failed verification is not an error here: the subscription exists
	// (in state failed, with verification_error), and the caller fixes the
	// destination and calls verify, rather than creating it again.
	created, err := hub.CreateSubscription(r.Context(), tenant, body)
	if err != nil {
		return err
	}
	w.Header().Set("Location", subscriptionPath(created.ID))
	writeJSON(w, http.StatusCreated, created)
	return nil
}

func (s *Server) listSubscriptions(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	params, err := listParams(r.URL.Query())
	if err != nil {
		return err
	}
	page, err := hub.ListSubscriptions(r.Context(), tenant, params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) getSubscription(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	sub, err := hub.GetSubscription(r.Context(), tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sub)
	return nil
}

// updateSubscription applies any subset of the writable fields; an empty
// object changes nothing and answers the subscription as it is.
func (s *Server) updateSubscription(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	var body hubapi.SubscriptionUpdate
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	sub, err := hub.UpdateSubscription(r.Context(), tenant, r.PathValue("id"), body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sub)
	return nil
}

// deleteSubscription answers 200 with how many pending deliveries went
// with the subscription, rather than a bare 204: an operator deleting a
// subscription wants to know what was dropped.
func (s *Server) deleteSubscription(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	if err := decodeNoBody(r); err != nil {
		return err
	}
	deleted, err := hub.DeleteSubscription(r.Context(), tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, deleted)
	return nil
}

// verifySubscription re-probes the destination. A probe that fails is a
// 422 verification_failed carrying the probe's message; the subscription
// is left in state failed with the same message.
func (s *Server) verifySubscription(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	if err := decodeNoBody(r); err != nil {
		return err
	}
	sub, err := hub.VerifySubscription(r.Context(), tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sub)
	return nil
}

// rotateSubscriptionSecret takes an optional body: no body (or no
// signing_secret) has the hub generate the new secret.
func (s *Server) rotateSubscriptionSecret(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	var body hubapi.SecretRotate
	if err := decodeOptionalJSON(r, &body); err != nil {
		return err
	}
	rotation, err := hub.RotateSecret(r.Context(), tenant, r.PathValue("id"), body.SigningSecret)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rotation)
	return nil
}

// enableSubscription and disableSubscription are the CLI's enable and
// disable; PATCH {"enabled": ...} does the same.
func (s *Server) enableSubscription(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	if err := decodeNoBody(r); err != nil {
		return err
	}
	sub, err := hub.EnableSubscription(r.Context(), tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sub)
	return nil
}

func (s *Server) disableSubscription(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	if err := decodeNoBody(r); err != nil {
		return err
	}
	sub, err := hub.DisableSubscription(r.Context(), tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sub)
	return nil
}

// decodeNoBody accepts the body of an action that takes no input: none,
// or an empty object. A field sent there is a client's mistake (a secret
// meant for rotate-secret, say) and is refused as an unknown field rather
// than ignored.
func decodeNoBody(r *http.Request) error {
	return decodeOptionalJSON(r, &struct{}{})
}

func subscriptionPath(id string) string {
	return "/v1/subscriptions/" + url.PathEscape(id)
}
