package hub_test

// End to end for each push sink beside webhooks (docs/concepts.md, Sinks): `hubctl serve`
// on kfake and a fresh database, a subscription created with `hubctl subs
// create`, an event published with `hubctl events produce`, and the message
// read back from the destination itself: body byte for byte and every
// identity attribute listed in docs/concepts.md, Sinks, under the delivery id
// the hub recorded for the attempt. Each test also takes one failure path of its sink to a
// dead letter, with the destination's reason on the recorded attempt.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqsapi "github.com/aws/aws-sdk-go-v2/service/sqs"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hubctl/hubctl/internal/testutil/eventbridgetest"
	"github.com/hubctl/hubctl/internal/testutil/goawstest"
	"github.com/hubctl/hubctl/internal/testutil/rabbittest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

const (
	postedKey = "transaction.posted"
	notedKey  = "transaction.noted"
	// jsonData is laid out the way no encoder would write it and holds
	// non-ASCII text and HTML-special characters: a sink that re-encoded
	// the data would change it.
	jsonData = "{ \"amount\" :10,\n  \"note\":\"h\u00e9llo <b>&</b>\"  }"
)

// identity is the X-Lerian-* values of one attempt under the lowercase
// names SQS message attributes and RabbitMQ headers carry (docs/concepts.md, Sinks).
func identity(eventID, eventKey, deliveryID string) map[string]string {
	return map[string]string{
		"lerian-event-id":       eventID,
		"lerian-event-type":     eventKey,
		"lerian-tenant-id":      e2eTenant,
		"lerian-delivery-id":    deliveryID,
		"lerian-schema-version": e2eSchemaVersion,
	}
}

// sentMessage is the part of a recorded SendMessage request (the SQS JSON
// protocol) that FIFO queues depend on.
type sentMessage struct {
	QueueURL               string `json:"QueueUrl"`
	MessageGroupID         string `json:"MessageGroupId"`
	MessageDeduplicationID string `json:"MessageDeduplicationId"`
}

func TestSQSEndToEnd(t *testing.T) {
	const keyID, secret = "AKIAE2ESQSTEST000001", "e2e/sqs/secret/access/key/0123456789"
	goaws := goawstest.Start(t)
	standard, fifo, deleted := goaws.NewQueue(t, false), goaws.NewQueue(t, true), goaws.NewQueue(t, false)
	h := startHub(t, postedKey)

	queue := func(queueURL string) map[string]any {
		return map[string]any{
			"type": "sqs", "queue_url": queueURL, "region": goawstest.Region, "endpoint": goaws.Endpoint(),
			"access_key_id": keyID, "secret_access_key": secret,
		}
	}
	posted := []string{postedKey}
	standardSub := h.subscribe(subscription("orders-standard", queue(standard), posted, nil))
	fifoSub := h.subscribe(subscription("orders-fifo", queue(fifo), posted, nil))
	deletedSub := h.subscribe(subscription("orders-deleted", queue(deleted), posted, oneAttempt))
	h.noSecrets(standardSub, keyID, secret)
	// Verified while it existed; gone by the time the event comes.
	if _, err := goaws.Client().DeleteQueue(t.Context(), &sqsapi.DeleteQueueInput{QueueUrl: aws.String(deleted)}); err != nil {
		t.Fatal(err)
	}

	mark := goaws.Mark()
	eventID := h.produce(postedKey, jsonData)

	received := func(t *testing.T, queueURL, deliveryID string) {
		t.Helper()
		msgs := goaws.Receive(t, queueURL)
		if len(msgs) != 1 {
			t.Fatalf("queue holds %d messages, want 1", len(msgs))
		}
		if msgs[0].Body != jsonData {
			t.Errorf("body %q, want the event data %q byte for byte", msgs[0].Body, jsonData)
		}
		got := map[string]string{}
		for name, v := range msgs[0].Attributes {
			if v.DataType != "String" {
				t.Errorf("attribute %s has data type %s, want String", name, v.DataType)
			}
			got[name] = v.StringValue
		}
		if want := identity(eventID, postedKey, deliveryID); !maps.Equal(got, want) {
			t.Errorf("message attributes %v, want %v", got, want)
		}
	}
	sent := func(t *testing.T, queueURL string) sentMessage {
		t.Helper()
		var found []sentMessage
		for _, r := range goaws.Requests(mark, "SendMessage") {
			var m sentMessage
			if err := json.Unmarshal(r.Body, &m); err != nil {
				t.Fatalf("SendMessage body is not JSON: %v", err)
			}
			if m.QueueURL == queueURL {
				found = append(found, m)
			}
		}
		if len(found) != 1 {
			t.Fatalf("%d SendMessage requests to the queue, want 1", len(found))
		}
		return found[0]
	}

	t.Run("standard queue", func(t *testing.T) {
		deliveryID := succeeded(t, h.settled(standardSub, 1), eventID, postedKey)
		received(t, standard, deliveryID)
		if m := sent(t, standard); m.MessageGroupID != "" || m.MessageDeduplicationID != "" {
			t.Errorf("SendMessage to a standard queue carried FIFO ids %+v", m)
		}
	})
	t.Run("FIFO queue", func(t *testing.T) {
		deliveryID := succeeded(t, h.settled(fifoSub, 1), eventID, postedKey)
		received(t, fifo, deliveryID)
		if m := sent(t, fifo); m.MessageGroupID != e2eTenant || m.MessageDeduplicationID != eventID {
			t.Errorf("SendMessage group id %q, deduplication id %q; want the tenant %q and the event id %q",
				m.MessageGroupID, m.MessageDeduplicationID, e2eTenant, eventID)
		}
	})
	t.Run("deleted queue", func(t *testing.T) {
		a := exhausted(t, h.settled(deletedSub, 1), eventID)
		// goaws answers with the query protocol's code; SQS itself names
		// the same error QueueDoesNotExist in its JSON protocol.
		if !strings.Contains(*a.Error, "NonExistentQueue") && !strings.Contains(*a.Error, "QueueDoesNotExist") {
			t.Errorf("attempt error %q does not carry SQS's reason", *a.Error)
		}
		if a.StatusCode == nil || *a.StatusCode != 400 {
			t.Errorf("attempt status %v, want SQS's HTTP 400", a.StatusCode)
		}
		if strings.Contains(*a.Error, secret) {
			t.Errorf("attempt error %q holds the secret access key", *a.Error)
		}
	})
}

func TestRabbitMQEndToEnd(t *testing.T) {
	broker := rabbittest.Connect(t)
	top := broker.NewTopology(t)
	top.Bind(t, postedKey)
	h := startHub(t, postedKey)

	exchange := map[string]any{"type": "rabbitmq", "url": broker.URL(), "exchange": top.Exchange}
	unbound := maps.Clone(exchange)
	unbound["routing_key"] = "hubctl-e2e-nobody-binds-this"
	posted := []string{postedKey}
	ordersSub := h.subscribe(subscription("orders-rabbit", exchange, posted, nil))
	// Verification publishes to the routing key, so the key is bound while
	// the subscription is created and unbound before the event comes: a
	// topology that changed after verification still fails each delivery.
	top.Bind(t, "hubctl-e2e-nobody-binds-this")
	unroutableSub := h.subscribe(subscription("orders-unroutable", unbound, posted, oneAttempt))
	top.Unbind(t, "hubctl-e2e-nobody-binds-this")
	top.Drain(t) // the verification messages
	if password, ok := amqpPassword(t, broker.URL()); ok {
		h.noSecrets(ordersSub, ":"+password+"@")
	}

	eventID := h.produce(postedKey, jsonData)

	t.Run("routed", func(t *testing.T) {
		deliveryID := succeeded(t, h.settled(ordersSub, 1), eventID, postedKey)
		// The broker confirmed the publish before the hub recorded
		// success, so the message is in the queue by now.
		msgs := top.Drain(t)
		if len(msgs) != 1 {
			t.Fatalf("queue holds %d messages, want 1", len(msgs))
		}
		m := msgs[0]
		if string(m.Body) != jsonData {
			t.Errorf("body %q, want the event data %q byte for byte", m.Body, jsonData)
		}
		if m.Exchange != top.Exchange || m.RoutingKey != postedKey {
			t.Errorf("published to %q with routing key %q, want %q with the event key", m.Exchange, m.RoutingKey, top.Exchange)
		}
		if m.MessageId != eventID || m.DeliveryMode != amqp.Persistent || m.ContentType != "application/json" {
			t.Errorf("message id %q, delivery mode %d, content type %q; want the event id, persistent, application/json",
				m.MessageId, m.DeliveryMode, m.ContentType)
		}
		got := map[string]string{}
		for name, v := range m.Headers {
			text, ok := v.(string)
			if !ok {
				t.Errorf("header %s is a %T, want a string", name, v)
			}
			got[name] = text
		}
		if want := identity(eventID, postedKey, deliveryID); !maps.Equal(got, want) {
			t.Errorf("headers %v, want %v", got, want)
		}
	})
	t.Run("unroutable at verification", func(t *testing.T) {
		never := maps.Clone(exchange)
		never["routing_key"] = "hubctl-e2e-never-bound"
		raw, err := json.Marshal(subscription("orders-never-routed", never, posted, nil))
		if err != nil {
			t.Fatal(err)
		}
		var sub hubapi.CreatedSubscription
		decode(t, mustRun(t, h.tenant, string(raw), "subs", "create", "--from-file", "-", "-o", "json"), &sub)
		if sub.VerificationState != "failed" || !strings.Contains(sub.VerificationError, "NO_ROUTE") {
			t.Errorf("verification %s (%s), want failed with NO_ROUTE", sub.VerificationState, sub.VerificationError)
		}
	})
	t.Run("unroutable", func(t *testing.T) {
		a := exhausted(t, h.settled(unroutableSub, 1), eventID)
		if !strings.Contains(*a.Error, "unroutable") || !strings.Contains(*a.Error, "hubctl-e2e-nobody-binds-this") {
			t.Errorf("attempt error %q does not say the message was returned unroutable", *a.Error)
		}
	})
}

// amqpPassword is the password of an amqp URL, when it has one.
func amqpPassword(t *testing.T, raw string) (string, bool) {
	t.Helper()
	uri, err := amqp.ParseURI(raw)
	if err != nil {
		t.Fatalf("broker URL: %v", err)
	}
	return uri.Password, uri.Password != ""
}

// envelope is the Detail of an EventBridge entry: the CloudEvent with the
// hub's identifiers as extension attributes.
type envelope struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Time            string          `json:"time"`
	DataContentType string          `json:"datacontenttype"`
	TenantID        string          `json:"tenantid"`
	SchemaVersion   string          `json:"schemaversion"`
	EventKey        string          `json:"eventkey"`
	DeliveryID      string          `json:"deliveryid"`
	Data            json.RawMessage `json:"data"`
	DataBase64      string          `json:"data_base64"`
}

func TestEventBridgeEndToEnd(t *testing.T) {
	eb := eventbridgetest.New(t, eventbridgetest.Config{Buses: []string{"orders", "rejecting"}})
	eb.RejectEntries(func(e eventbridgetest.Entry) (string, string) {
		if e.EventBusName == "rejecting" {
			return "InternalFailure", "the bus is having a bad day"
		}
		return "", ""
	})
	cfg := eb.Config()
	h := startHub(t, postedKey, notedKey)

	bus := func(name string) map[string]any {
		return map[string]any{
			"type": "eventbridge", "event_bus": name, "region": cfg.Region, "endpoint": eb.URL(),
			"access_key_id": cfg.AccessKeyID, "secret_access_key": cfg.SecretAccessKey,
		}
	}
	ordersSub := h.subscribe(subscription("orders-bus", bus("orders"), []string{"transaction.*"}, nil))
	rejectingSub := h.subscribe(subscription("rejecting-bus", bus("rejecting"), []string{postedKey}, oneAttempt))
	h.noSecrets(ordersSub, cfg.AccessKeyID, cfg.SecretAccessKey)

	// Text that is not JSON travels as data_base64, byte for byte.
	const textData = "plain\ttext, h\u00e9llo\n"
	jsonEvent := h.produce(postedKey, jsonData)
	textEvent := h.produce(notedKey, textData, "--content-type", "text/plain; charset=utf-8")

	t.Run("accepted", func(t *testing.T) {
		deliveries := h.settled(ordersSub, 2)
		jsonDelivery := succeeded(t, deliveries, jsonEvent, postedKey)
		textDelivery := succeeded(t, deliveries, textEvent, notedKey)
		entries := map[string]eventbridgetest.Entry{}
		details := map[string]envelope{}
		for _, e := range eb.Entries() {
			if e.EventBusName != "orders" {
				continue
			}
			var env envelope
			if err := json.Unmarshal([]byte(e.Detail), &env); err != nil {
				t.Fatalf("Detail is not a JSON envelope: %v\n%s", err, e.Detail)
			}
			entries[env.ID], details[env.ID] = e, env
		}
		if len(entries) != 2 {
			t.Fatalf("the orders bus got %d entries, want 2", len(entries))
		}
		for _, c := range []struct {
			eventID, eventKey, deliveryID, contentType string
		}{
			{jsonEvent, postedKey, jsonDelivery, "application/json"},
			{textEvent, notedKey, textDelivery, "text/plain; charset=utf-8"},
		} {
			e, env := entries[c.eventID], details[c.eventID]
			if e.Source != "midaz" || e.DetailType != c.eventKey || e.Time == nil {
				t.Errorf("entry of %s: source %q, detail type %q, time %v; want midaz, the event key, the event time",
					c.eventKey, e.Source, e.DetailType, e.Time)
			}
			want := envelope{
				SpecVersion: "1.0", ID: c.eventID, Source: "midaz", Type: "studio.lerian.midaz." + c.eventKey,
				Time: env.Time, DataContentType: c.contentType, TenantID: e2eTenant, SchemaVersion: e2eSchemaVersion,
				EventKey: c.eventKey, DeliveryID: c.deliveryID,
			}
			if env.Time == "" || !equalEnvelope(env, want) {
				t.Errorf("envelope of %s = %s, want %+v with a time", c.eventKey, e.Detail, want)
			}
		}
		// JSON data is embedded as JSON so rules can match its fields:
		// the same value, without the producer's whitespace.
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(jsonData)); err != nil {
			t.Fatal(err)
		}
		if got := details[jsonEvent]; !bytes.Equal(got.Data, compact.Bytes()) || got.DataBase64 != "" {
			t.Errorf("JSON event data %s (base64 %q), want %s", got.Data, got.DataBase64, compact.Bytes())
		}
		got := details[textEvent]
		decoded, err := base64.StdEncoding.DecodeString(got.DataBase64)
		if err != nil || string(decoded) != textData || got.Data != nil {
			t.Errorf("text event data_base64 %q (data %s), want the base64 of %q", got.DataBase64, got.Data, textData)
		}
	})
	t.Run("entry rejected", func(t *testing.T) {
		a := exhausted(t, h.settled(rejectingSub, 1), jsonEvent)
		if !strings.Contains(*a.Error, "InternalFailure") || !strings.Contains(*a.Error, "the bus is having a bad day") {
			t.Errorf("attempt error %q does not carry the entry's error code and message", *a.Error)
		}
		if a.StatusCode == nil || *a.StatusCode != 200 || a.Response == nil || !strings.Contains(*a.Response, `"ErrorCode":"InternalFailure"`) {
			t.Errorf("attempt status %v, response %v; want HTTP 200 and the answer naming the entry's error code", a.StatusCode, a.Response)
		}
	})
}

func equalEnvelope(a, b envelope) bool {
	return a.SpecVersion == b.SpecVersion && a.ID == b.ID && a.Source == b.Source && a.Type == b.Type &&
		a.Time == b.Time && a.DataContentType == b.DataContentType && a.TenantID == b.TenantID &&
		a.SchemaVersion == b.SchemaVersion && a.EventKey == b.EventKey && a.DeliveryID == b.DeliveryID
}
