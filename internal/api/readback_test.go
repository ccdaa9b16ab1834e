package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/testutil/goawstest"
	"github.com/hubctl/hubctl/internal/testutil/rabbittest"
	"github.com/hubctl/hubctl/pkg/webhook"
)

// readBack returns the sink of a read, edited, as the JSON a client sends
// back in a PATCH.
func readBack(t *testing.T, read reply, edit func(map[string]any)) string {
	t.Helper()
	object, _ := read.body["sink"].(map[string]any)
	if object == nil {
		t.Fatalf("no sink in %s", read.raw)
	}
	if edit != nil {
		edit(object)
	}
	raw, err := json.Marshal(object)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// storedCredentials reads a subscription's sealed sink credentials: the
// envelope, which changes whenever they are sealed again, and what it
// decrypts to.
func (h *harness) storedCredentials(t *testing.T, id string) (envelope, plaintext string) {
	t.Helper()
	if err := h.store.Pool.QueryRow(context.Background(), `SELECT sink_credentials FROM subscriptions WHERE id = $1`, id).Scan(&envelope); err != nil {
		t.Fatal(err)
	}
	plain, err := testKeyring(t).Decrypt(envelope, id, catalog.ColumnSinkCredentials)
	if err != nil {
		t.Fatal(err)
	}
	return envelope, string(plain)
}

// TestReadBackSinkKeepsCredentials: what GET shows, sent back with PATCH
// as it is or edited, keeps the credentials GET masked, against a real
// SQS emulator and a real broker that verify them.
func TestReadBackSinkKeepsCredentials(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, key := h.tenantWithKey(t, "acme")
	var answers []reply

	t.Run("sqs", func(t *testing.T) {
		const keyID, secret = "AKIAREADBACK00000001", "read/back/secret/access/key/0123456789"
		goaws := goawstest.Start(t)
		queue, nextQueue := goaws.NewQueue(t, false), goaws.NewQueue(t, false)
		body, _ := json.Marshal(map[string]any{"name": "orders", "event_types": []string{"*"}, "sink": map[string]any{
			"type": "sqs", "queue_url": queue, "region": goawstest.Region, "endpoint": goaws.Endpoint(),
			"access_key_id": keyID, "secret_access_key": secret,
		}})
		created := h.v1(t, http.StatusCreated, key, "POST", "/v1/subscriptions", string(body))
		path := "/v1/subscriptions/" + created.body["id"].(string)
		read := h.v1(t, http.StatusOK, key, "GET", path, "")
		answers = append(answers, created, read)
		sink := read.body["sink"].(map[string]any)
		if sink["access_key_id"] != "****" || sink["secret_access_key"] != "****" || read.body["verification_state"] != "active" {
			t.Fatalf("read %s", read.raw)
		}
		envelope, _ := h.storedCredentials(t, created.body["id"].(string))

		mark := goaws.Mark()
		same := h.v1(t, http.StatusOK, key, "PATCH", path, `{"name":"orders v2","sink":`+readBack(t, read, nil)+`}`)
		answers = append(answers, same)
		if after, _ := h.storedCredentials(t, created.body["id"].(string)); after != envelope || same.body["verification_state"] != "active" ||
			len(goaws.Requests(mark, "GetQueueAttributes")) != 0 {
			t.Errorf("sending back the read sink changed it: %s", same.raw)
		}

		moved := h.v1(t, http.StatusOK, key, "PATCH", path, `{"sink":`+readBack(t, read, func(o map[string]any) { o["queue_url"] = nextQueue })+`}`)
		answers = append(answers, moved)
		if moved.body["verification_state"] != "active" || len(goaws.Requests(mark, "GetQueueAttributes")) != 1 {
			t.Errorf("an edited read sink was not verified again: %s", moved.raw)
		}
		if _, plain := h.storedCredentials(t, created.body["id"].(string)); plain != `{"access_key_id":"`+keyID+`","secret_access_key":"`+secret+`"}` {
			t.Errorf("the keys after an edit that kept them masked are not the created ones")
		}

		refused := h.v1(t, http.StatusBadRequest, key, "POST", "/v1/subscriptions", strings.Replace(string(body), secret, "****", 1))
		if details, _ := refused.body["details"].(map[string]any); refused.body["code"] != "invalid_sink" || details["field"] != "sink.secret_access_key" {
			t.Errorf("create with a masked key: %s", refused.raw)
		}
	})

	t.Run("rabbitmq", func(t *testing.T) {
		broker := rabbittest.Connect(t)
		first, second := broker.NewTopology(t), broker.NewTopology(t)
		brokerURL, err := url.Parse(broker.URL())
		if err != nil {
			t.Fatal(err)
		}
		password, ok := brokerURL.User.Password()
		if !ok {
			t.Skipf("the test broker's URL has no password to mask")
		}
		wantURL := strings.Replace(broker.URL(), brokerURL.User.String()+"@", url.User(brokerURL.User.Username()).String()+":****@", 1)

		body, _ := json.Marshal(map[string]any{"name": "orders", "event_types": []string{"*"},
			"sink": map[string]any{"type": "rabbitmq", "url": broker.URL(), "exchange": first.Exchange}})
		created := h.v1(t, http.StatusCreated, key, "POST", "/v1/subscriptions", string(body))
		id := created.body["id"].(string)
		path := "/v1/subscriptions/" + id
		read := h.v1(t, http.StatusOK, key, "GET", path, "")
		sink := read.body["sink"].(map[string]any)
		if sink["url"] != wantURL || len(sink) != 3 || read.body["verification_state"] != "active" {
			t.Fatalf("read %s, want the sink url %s and no other credential field", read.raw, wantURL)
		}
		envelope, _ := h.storedCredentials(t, id)

		same := h.v1(t, http.StatusOK, key, "PATCH", path, `{"sink":`+readBack(t, read, nil)+`}`)
		if after, _ := h.storedCredentials(t, id); after != envelope || same.body["verification_state"] != "active" {
			t.Errorf("sending back the read sink changed it: %s", same.raw)
		}
		// The broker accepts the login only with the real password.
		moved := h.v1(t, http.StatusOK, key, "PATCH", path, `{"sink":`+readBack(t, read, func(o map[string]any) { o["exchange"] = second.Exchange })+`}`)
		if moved.body["verification_state"] != "active" || moved.body["sink"].(map[string]any)["exchange"] != second.Exchange {
			t.Errorf("an edited read sink, verified by the broker: %s", moved.raw)
		}

		elsewhere := strings.Replace(readBack(t, read, nil), "127.0.0.1", "localhost", 1)
		refused := h.v1(t, http.StatusBadRequest, key, "PATCH", path, `{"sink":`+elsewhere+`}`)
		if details, _ := refused.body["details"].(map[string]any); refused.body["code"] != "invalid_sink" || details["field"] != "sink.url" {
			t.Errorf("the masked password sent to another host: %s", refused.raw)
		}
		for _, a := range []reply{created, read, same, moved, refused} {
			assertNoSecret(t, "answer "+a.raw, a.raw, ":"+password+"@")
		}
	})

	t.Run("webhook signing secret", func(t *testing.T) {
		rcv := newReceiver(t, http.StatusOK)
		created := h.v1(t, http.StatusCreated, key, "POST", "/v1/subscriptions", webhookBody(rcv))
		secret, _ := created.body["signing_secret"].(string)
		path := "/v1/subscriptions/" + created.body["id"].(string)
		read := h.v1(t, http.StatusOK, key, "GET", path, "")
		if !strings.HasPrefix(secret, "whsec_") || read.body["signing_secret"] != "****" {
			t.Fatalf("created %s\nread %s", created.raw, read.raw)
		}
		same := h.v1(t, http.StatusOK, key, "PATCH", path, `{"name":"orders v2","sink":`+readBack(t, read, nil)+`,"signing_secret":"****"}`)
		if same.body["previous_secret_expires_at"] != nil || same.body["signing_secret"] != "****" {
			t.Errorf("sending back the masked secret rotated it: %s", same.raw)
		}
		h.v1(t, http.StatusOK, key, "POST", path+"/verify", "")
		if probe := rcv.last(t, 2); len(probe.Header.Values(webhook.HeaderSignature)) != 1 || !signedBy(probe, 0, secret) {
			t.Errorf("after sending back the masked secret, the probe is not signed by the created secret alone")
		}
		answers = append(answers, read, same)
	})

	h.stop()
	logs := h.logs.String()
	for _, secret := range []string{"AKIAREADBACK00000001", "read/back/secret/access/key/0123456789"} {
		assertNoSecret(t, "the log", logs, secret)
		for _, a := range answers {
			assertNoSecret(t, "answer "+a.raw, a.raw, secret)
		}
	}
}
