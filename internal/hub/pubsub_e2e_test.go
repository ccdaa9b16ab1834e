package hub_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"maps"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/testutil/pubsubtest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// TestPubSubEndToEnd takes events through the hub to a Pub/Sub topic on
// the client library's fake (see sinks_e2e_test.go for the shape of these
// tests): an ordered subscription's messages carry the event's subject as
// their ordering key, a topic missing at verification fails it, a topic
// deleted after verification takes the delivery to a dead letter naming
// it, and a service-account key shows in no read, error or log line.
func TestPubSubEndToEnd(t *testing.T) {
	server := pubsubtest.Start(t)
	topic := server.NewTopic(t)
	doomed := server.NewTopic(t)
	h := startHub(t, postedKey)

	sinkObject := map[string]any{"type": "pubsub", "project": pubsubtest.Project, "topic": topic, "endpoint": server.Endpoint()}
	posted := []string{postedKey}
	ordersSub := h.subscribe(subscription("orders-pubsub", sinkObject, posted, map[string]any{"ordering": "subject"}))
	gone := maps.Clone(sinkObject)
	gone["topic"] = doomed
	goneSub := h.subscribe(subscription("orders-pubsub-gone", gone, posted, oneAttempt))
	server.DeleteTopic(t, doomed)

	eventID := h.produce(postedKey, jsonData, "--subject", "account-7")

	t.Run("published", func(t *testing.T) {
		deliveryID := succeeded(t, h.settled(ordersSub, 1), eventID, postedKey)
		msgs := server.Messages(topic)
		if len(msgs) != 1 {
			t.Fatalf("topic holds %d messages, want 1", len(msgs))
		}
		m := msgs[0]
		if string(m.Data) != jsonData {
			t.Errorf("data %q, want the event data %q byte for byte", m.Data, jsonData)
		}
		if m.OrderingKey != "account-7" {
			t.Errorf("ordering key %q, want the event's subject: the subscription orders by subject", m.OrderingKey)
		}
		if m.Attributes["ce-id"] != eventID || m.Attributes["ce-subject"] != "account-7" || m.Attributes["ce-specversion"] != "1.0" {
			t.Errorf("ce attributes %v; want ce-id %s, ce-subject account-7, ce-specversion 1.0", m.Attributes, eventID)
		}
		for name, want := range identity(eventID, postedKey, deliveryID) {
			if got := m.Attributes[name]; got != want {
				t.Errorf("attribute %s = %q, want %q", name, got, want)
			}
		}
	})
	t.Run("no topic at verification", func(t *testing.T) {
		nowhere := maps.Clone(sinkObject)
		nowhere["topic"] = pubsubtest.UniqueTopic()
		sub := h.create(subscription("orders-pubsub-nowhere", nowhere, posted, nil))
		if sub.VerificationState != "failed" || !strings.Contains(sub.VerificationError, "does not exist") {
			t.Errorf("verification %s (%s), want failed saying the topic does not exist", sub.VerificationState, sub.VerificationError)
		}
	})
	t.Run("topic deleted after verification", func(t *testing.T) {
		a := exhausted(t, h.settled(goneSub, 1), eventID)
		if !strings.Contains(*a.Error, doomed) || !strings.Contains(*a.Error, "does not exist") {
			t.Errorf("attempt error %q does not say the topic is gone", *a.Error)
		}
	})
	t.Run("the key is never shown", func(t *testing.T) {
		key, privateKey := e2eServiceAccountKey(t)
		keyed := maps.Clone(sinkObject)
		keyed["credentials_json"] = key
		// The fake speaks plain gRPC: a keyed sink reaches it over TLS and
		// fails verification, whose error must not quote the key either.
		sub := h.create(subscription("orders-pubsub-keyed", keyed, posted, nil))
		if sub.VerificationState != "failed" {
			t.Errorf("verification %s, want failed: the fake cannot take a TLS connection", sub.VerificationState)
		}
		secrets := []string{key, privateKey}
		for line := range strings.SplitSeq(privateKey, "\n") {
			if len(line) >= 16 && !strings.HasPrefix(line, "-----") {
				secrets = append(secrets, line)
			}
		}
		h.noSecrets(sub, secrets...)
		if shown := mustRun(t, h.tenant, "", "subs", "get", sub.ID, "-o", "json"); !strings.Contains(shown, `"credentials_json": "****"`) && !strings.Contains(shown, `"credentials_json":"****"`) {
			t.Errorf("read does not show the key masked:\n%s", shown)
		}
		log := h.proc.Stderr()
		for _, secret := range secrets {
			if strings.Contains(log, secret) {
				t.Fatalf("serve's log holds part of the key")
			}
		}
	})
}

// create runs `hubctl subs create --from-file -` whatever verification
// decides, and returns the created subscription.
func (h *hubSession) create(body map[string]any) hubapi.CreatedSubscription {
	h.t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		h.t.Fatal(err)
	}
	var sub hubapi.CreatedSubscription
	decode(h.t, mustRun(h.t, h.tenant, string(raw), "subs", "create", "--from-file", "-", "-o", "json"), &sub)
	return sub
}

// e2eServiceAccountKey is a service-account key file's content with a
// fresh RSA key, and that private key's PEM.
func e2eServiceAccountKey(t *testing.T) (key, privateKey string) {
	t.Helper()
	private, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(private)
	if err != nil {
		t.Fatal(err)
	}
	privateKey = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	raw, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": pubsubtest.Project, "private_key_id": "e2e-key-id-0123456789abcdef",
		"private_key": privateKey, "client_email": "hub@" + pubsubtest.Project + ".iam.gserviceaccount.com",
		"token_uri": "https://oauth2.googleapis.com/token",
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw), privateKey
}
