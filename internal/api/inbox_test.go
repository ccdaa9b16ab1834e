package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// eventOf returns the CloudEvents id of a seeded delivery's event and the
// id of its first attempt ("" when it has none).
func eventOf(t *testing.T, h *harness, deliveryID string) (eventID, attemptID string) {
	t.Helper()
	err := h.store.Pool.QueryRow(context.Background(), `
		SELECT e.id::text, coalesce((SELECT a.id::text FROM delivery_attempts a WHERE a.job_id = j.id ORDER BY a.attempt LIMIT 1), '')
		FROM delivery_jobs j JOIN events e ON e.seq = j.event_seq WHERE j.id = $1`, deliveryID).Scan(&eventID, &attemptID)
	if err != nil {
		t.Fatal(err)
	}
	return eventID, attemptID
}

func TestDeliveryAndEventLookupsFromWhatAReceiverSaw(t *testing.T) {
	f := newDeliveriesFixture(t, "pending", "succeeded")
	eventID, attemptID := eventOf(t, f.h, f.deliveries[0])

	byAttempt := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", "/v1/deliveries/"+attemptID, "")
	if byAttempt.body["id"] != f.deliveries[0] {
		t.Errorf("GET /v1/deliveries/{attempt id} = %s, want delivery %s", byAttempt.raw, f.deliveries[0])
	}

	event := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", "/v1/inbox/"+eventID, "")
	if event.body["id"] != eventID || event.body["type"] != "transaction.posted" || event.body["source"] != "midaz" {
		t.Errorf("event %s", event.raw)
	}
	deliveries, _ := event.body["deliveries"].([]any)
	if len(deliveries) != 1 {
		t.Fatalf("event deliveries %s, want 1", event.raw)
	}
	d := deliveries[0].(map[string]any)
	delivery, _ := d["delivery"].(map[string]any)
	history, _ := delivery["attempt_history"].([]any)
	if d["subscription_id"] != f.sub || d["sink_type"] != "webhook" || delivery["id"] != f.deliveries[0] || len(history) != 2 {
		t.Errorf("event delivery %v, want %s with its 2 attempts", d, f.deliveries[0])
	}

	list := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", "/v1/inbox?type=transaction.posted&limit=1", "")
	if ids := itemIDs(t, list); len(ids) != 1 || list.body["next_cursor"] == nil {
		t.Errorf("inbox page %s, want 1 event and a next cursor", list.raw)
	}
	none := f.h.v1(t, http.StatusOK, f.acmeKey, "GET", "/v1/inbox?source=nobody", "")
	if ids := itemIDs(t, none); len(ids) != 0 {
		t.Errorf("inbox by an unknown source %s, want no events", none.raw)
	}
	for _, query := range []string{"?since=yesterday", "?until=soon", "?type=a&type=b", "?cursor=forged"} {
		r := f.h.v1(t, http.StatusBadRequest, f.acmeKey, "GET", "/v1/inbox"+query, "")
		if r.body["code"] != "invalid_request" {
			t.Errorf("%s: %s, want invalid_request", query, r.raw)
		}
	}
}

func TestInboxOfAnotherTenantAnswersLikeAMissingEvent(t *testing.T) {
	f := newDeliveriesFixture(t, "pending")
	foreignEvent, _ := eventOf(t, f.h, f.globexID)
	missing := uuid.Must(uuid.NewV7()).String()
	foreign := f.h.v1(t, http.StatusNotFound, f.acmeKey, "GET", "/v1/inbox/"+foreignEvent, "")
	absent := f.h.v1(t, http.StatusNotFound, f.acmeKey, "GET", "/v1/inbox/"+missing, "")
	if foreign.body["code"] != "event_not_found" {
		t.Errorf("another tenant's event: %s, want event_not_found", foreign.raw)
	}
	if a, b := strings.ReplaceAll(foreign.raw, foreignEvent, "ID"), strings.ReplaceAll(absent.raw, missing, "ID"); a != b {
		t.Errorf("another tenant's answer differs from a missing one's:\n %s\n %s", a, b)
	}
	// The seeded events only, not the operational events of the
	// fixture's subscriptions.
	if ids := itemIDs(t, f.h.v1(t, http.StatusOK, f.acmeKey, "GET", "/v1/inbox?source=midaz", "")); len(ids) != 1 {
		t.Errorf("acme's inbox lists %d events, want only its own 1", len(ids))
	}
	f.h.v1(t, http.StatusOK, f.globexKey, "GET", "/v1/inbox/"+foreignEvent, "")
}
