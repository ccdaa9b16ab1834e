package hub_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/testutil/natstest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// TestNATSEndToEnd takes an event through the hub to a JetStream stream
// (see sinks_e2e_test.go for the shape of these tests), a subscription
// whose subject no stream captures failing verification, and a delivery to
// a stream deleted after verification to a dead letter naming the subject.
func TestNATSEndToEnd(t *testing.T) {
	server := natstest.Connect(t)
	stream := server.NewStream(t)
	doomed := server.NewStream(t)
	h := startHub(t, postedKey)

	const token = "e2e-nats-token-never-shown-0123"
	sinkObject := map[string]any{"type": "nats", "url": natstest.URL(), "subject": stream.Subject, "credentials": map[string]any{"token": token}}
	posted := []string{postedKey}
	ordersSub := h.subscribe(subscription("orders-nats", sinkObject, posted, nil))
	h.noSecrets(ordersSub, token)
	gone := maps.Clone(sinkObject)
	gone["subject"] = doomed.Subject
	goneSub := h.subscribe(subscription("orders-nats-gone", gone, posted, oneAttempt))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := server.JS.DeleteStream(ctx, doomed.Name); err != nil {
		t.Fatal(err)
	}

	eventID := h.produce(postedKey, jsonData)

	t.Run("stored", func(t *testing.T) {
		deliveryID := succeeded(t, h.settled(ordersSub, 1), eventID, postedKey)
		msgs := stream.Messages(t)
		if len(msgs) != 1 {
			t.Fatalf("stream holds %d messages, want 1", len(msgs))
		}
		m := msgs[0]
		if string(m.Data) != jsonData {
			t.Errorf("data %q, want the event data %q byte for byte", m.Data, jsonData)
		}
		if m.Header.Get("Nats-Msg-Id") != eventID || m.Header.Get("ce-id") != eventID {
			t.Errorf("Nats-Msg-Id %q, ce-id %q; want the event id %s", m.Header.Get("Nats-Msg-Id"), m.Header.Get("ce-id"), eventID)
		}
		for name, want := range identity(eventID, postedKey, deliveryID) {
			if got := m.Header.Get(name); got != want {
				t.Errorf("header %s = %q, want %q", name, got, want)
			}
		}
	})
	t.Run("no stream at verification", func(t *testing.T) {
		nowhere := maps.Clone(sinkObject)
		nowhere["subject"] = natstest.UniqueSubject()
		raw, err := json.Marshal(subscription("orders-nats-nowhere", nowhere, posted, nil))
		if err != nil {
			t.Fatal(err)
		}
		var sub hubapi.CreatedSubscription
		decode(t, mustRun(t, h.tenant, string(raw), "subs", "create", "--from-file", "-", "-o", "json"), &sub)
		if sub.VerificationState != "failed" || !strings.Contains(sub.VerificationError, "no JetStream stream captures") {
			t.Errorf("verification %s (%s), want failed naming the subject no stream captures", sub.VerificationState, sub.VerificationError)
		}
	})
	t.Run("stream deleted after verification", func(t *testing.T) {
		a := exhausted(t, h.settled(goneSub, 1), eventID)
		if !strings.Contains(*a.Error, doomed.Subject) || strings.Contains(*a.Error, token) {
			t.Errorf("attempt error %q does not name the subject, or quotes the token", *a.Error)
		}
	})
}
