package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/rabbitmq"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// readBackSink is the sink object of a read, as a client sends it back.
func readBackSink(t *testing.T, sub hubapi.Subscription, edit func(map[string]any)) json.RawMessage {
	t.Helper()
	object := map[string]any{}
	for k, v := range sub.Sink {
		object[k] = v
	}
	if edit != nil {
		edit(object)
	}
	raw, err := json.Marshal(object)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func isFieldCode(err error, code, field string) bool {
	gotCode, gotField := codeOf(err)
	return gotCode == code && gotField == field
}

func (f *subsFixture) storedCredentials(t *testing.T, id string) string {
	t.Helper()
	row := f.raw(t, id)
	if row.credentials == nil {
		t.Fatalf("subscription %s has no stored credentials", id)
	}
	plain, err := f.keys.Decrypt(*row.credentials, id, catalog.ColumnSinkCredentials)
	if err != nil {
		t.Fatal(err)
	}
	return string(plain)
}

// TestReadBackSinkKeepsCredentials: sending back the sink a read showed,
// credentials masked, changes no credential; edited, it changes what was
// edited and keeps the credentials.
func TestReadBackSinkKeepsCredentials(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	const token = "queue-credential-token-0002"
	const wantCredentials = `{"token":"` + token + `"}`
	queue, _ := f.create(t, "acme", hubapi.SubscriptionCreate{
		Sink: json.RawMessage(`{"type": "sqs", "url": "https://queue.test/q", "token": "` + token + `"}`), EventTypes: []string{"*"},
	})
	read, err := f.svc.Get(ctx, "acme", queue.ID)
	if err != nil {
		t.Fatal(err)
	}
	probes, before := f.queue.probeCount(), f.raw(t, queue.ID)

	renamed := "renamed"
	same, err := f.svc.Update(ctx, "acme", queue.ID, hubapi.SubscriptionUpdate{Name: &renamed, Sink: readBackSink(t, read, nil)})
	if err != nil {
		t.Fatalf("sending back the read sink: %v", err)
	}
	after := f.raw(t, queue.ID)
	if same.VerificationState != "active" || f.queue.probeCount() != probes || *after.credentials != *before.credentials {
		t.Errorf("the read sink sent back changed it: state %q, %d probes, credentials re-sealed %v",
			same.VerificationState, f.queue.probeCount()-probes, *after.credentials != *before.credentials)
	}

	moved, err := f.svc.Update(ctx, "acme", queue.ID, hubapi.SubscriptionUpdate{
		Sink: readBackSink(t, read, func(o map[string]any) { o["url"] = "https://queue.test/r" }),
	})
	if err != nil {
		t.Fatalf("sending back an edited read sink: %v", err)
	}
	if moved.Sink["url"] != "https://queue.test/r" || moved.Sink["token"] != hubapi.Masked || f.queue.probeCount() != probes+1 {
		t.Errorf("edited sink: %v after %d probes", moved.Sink, f.queue.probeCount()-probes)
	}
	if got := f.storedCredentials(t, queue.ID); got != wantCredentials {
		t.Errorf("credentials after an edit that kept them masked: %s, want %s", got, wantCredentials)
	}
	replaced, err := f.svc.Update(ctx, "acme", queue.ID, hubapi.SubscriptionUpdate{
		Sink: readBackSink(t, moved.Subscription, func(o map[string]any) { o["token"] = "the-next-token-0006" }),
	})
	if err != nil || replaced.Sink["token"] != hubapi.Masked {
		t.Fatalf("a new token: %v, %v", replaced.Sink, err)
	}
	if got := f.storedCredentials(t, queue.ID); got != `{"token":"the-next-token-0006"}` {
		t.Errorf("credentials after sending a new token: %s", got)
	}
}

// TestMaskedCredentialOnCreateIsRefused: with no current value to keep,
// the mask is refused, naming the field, rather than stored as the
// credential.
func TestMaskedCredentialOnCreateIsRefused(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	_, _, err := f.svc.Create(ctx, "acme", hubapi.SubscriptionCreate{
		Sink: json.RawMessage(`{"type": "sqs", "url": "https://queue.test/q", "token": "****"}`), EventTypes: []string{"*"},
	})
	if code, field := codeOf(err); code != service.CodeInvalidSink || field != "sink.token" || !strings.Contains(err.Error(), `"****"`) {
		t.Errorf("err = %v (code %q field %q), want invalid_sink on sink.token about the mask", err, code, field)
	}
	in := webhookInput("https://hooks.test/a")
	in.SigningSecret = hubapi.Masked
	if _, _, err := f.svc.Create(ctx, "acme", in); !isFieldCode(err, hubapi.CodeInvalidRequest, "signing_secret") {
		t.Errorf("a masked signing secret on create: %v, want invalid_request on signing_secret", err)
	}
	if page, err := f.svc.List(ctx, "acme", hubapi.ListParams{}); err != nil || len(page.Items) != 0 {
		t.Errorf("refused creates left %d subscriptions, %v", len(page.Items), err)
	}
}

// TestSigningSecretReadsMaskedAndSentBackKeepsIt: every read of a webhook
// shows its signing secret as the mask, which, sent back, rotates nothing.
func TestSigningSecretReadsMaskedAndSentBackKeepsIt(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	hook, secret := f.create(t, "acme", webhookInput("https://hooks.test/a"))
	pullSub, _ := f.create(t, "acme", hubapi.SubscriptionCreate{Name: "pull", Sink: json.RawMessage(`{"type": "pull"}`), EventTypes: []string{"*"}})

	got, err := f.svc.Get(ctx, "acme", hook.ID)
	if err != nil || got.SigningSecret != hubapi.Masked || hook.SigningSecret != hubapi.Masked {
		t.Fatalf("get shows signing_secret %q (create's view %q), %v; want the mask", got.SigningSecret, hook.SigningSecret, err)
	}
	page, err := f.svc.List(ctx, "acme", hubapi.ListParams{})
	if err != nil || len(page.Items) != 2 || page.Items[0].SigningSecret != hubapi.Masked || page.Items[1].SigningSecret != "" {
		t.Fatalf("list: %+v, %v; want the webhook's secret masked and none for pull", page.Items, err)
	}

	before := f.raw(t, hook.ID)
	masked := hubapi.Masked
	if _, err := f.svc.Update(ctx, "acme", hook.ID, hubapi.SubscriptionUpdate{SigningSecret: &masked, Sink: readBackSink(t, got, nil)}); err != nil {
		t.Fatalf("sending back the masked secret: %v", err)
	}
	after := f.raw(t, hook.ID)
	if *after.secret != *before.secret || after.previous != nil {
		t.Errorf("sending back the masked secret rotated it")
	}
	row, _ := f.st.GetSubscription(ctx, "acme", uuid.MustParse(hook.ID))
	if secrets, err := f.svc.Sinks().SigningSecrets(row); err != nil || len(secrets) != 1 || secrets[0] != secret {
		t.Errorf("signing with %d secrets (%v), want the created one alone", len(secrets), err)
	}

	if code, field := codeOf(mustErr(f.svc.Update(ctx, "acme", pullSub.ID, hubapi.SubscriptionUpdate{SigningSecret: &masked}))); code != hubapi.CodeInvalidRequest || field != "signing_secret" {
		t.Errorf("a masked secret on a pull subscription: code %q field %q, want invalid_request on signing_secret", code, field)
	}
}

// rabbitFixture serves subscriptions with the real RabbitMQ sink type whose
// dialer never connects: verification fails, and counts as one dial.
type rabbitFixture struct {
	*subsFixture
	rabbit *service.Subscriptions
	dials  atomic.Int64
}

func newRabbitFixture(t *testing.T) *rabbitFixture {
	t.Helper()
	f := &rabbitFixture{subsFixture: newSubsFixture(t, true)}
	typ := rabbitmq.NewType(rabbitmq.Options{AllowPrivate: true,
		Dial: func(context.Context, string, string) (net.Conn, error) {
			f.dials.Add(1)
			return nil, errors.New("this test's dialer connects nowhere")
		}})
	registry, err := sink.NewRegistry(typ)
	if err != nil {
		t.Fatal(err)
	}
	f.rabbit = service.NewSubscriptions(f.st.Catalog, f.st.Queue, f.st.OnCall, f.keys, registry, service.SubscriptionOptions{Now: f.clk.Now})
	return f
}

// TestRabbitMQPasswordReadsMaskedInTheURL: the password shows masked in
// place, and the URL as read keeps it, for the same broker and user only.
func TestRabbitMQPasswordReadsMaskedInTheURL(t *testing.T) {
	f := newRabbitFixture(t)
	ctx := context.Background()
	const password = "broker-password-0005"
	const wantCredentials = `{"password":"` + password + `"}`
	created, _, err := f.rabbit.Create(ctx, "acme", hubapi.SubscriptionCreate{
		Sink:       json.RawMessage(`{"type": "rabbitmq", "url": "amqp://hub:` + password + `@127.0.0.1:5672/orders", "exchange": "events"}`),
		EventTypes: []string{"*"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if created.Sink["url"] != "amqp://hub:****@127.0.0.1:5672/orders" || len(created.Sink) != 3 {
		t.Errorf("sink reads %v, want the URL with its password masked, and no other field", created.Sink)
	}
	dials, before := f.dials.Load(), f.raw(t, created.ID)

	if _, err := f.rabbit.Update(ctx, "acme", created.ID, hubapi.SubscriptionUpdate{Sink: readBackSink(t, created, nil)}); err != nil {
		t.Fatalf("sending back the read sink: %v", err)
	}
	if after := f.raw(t, created.ID); f.dials.Load() != dials || *after.credentials != *before.credentials {
		t.Errorf("the read sink sent back changed it: %d more dials", f.dials.Load()-dials)
	}

	edited, err := f.rabbit.Update(ctx, "acme", created.ID, hubapi.SubscriptionUpdate{
		Sink: readBackSink(t, created, func(o map[string]any) {
			o["url"], o["exchange"] = "amqp://hub:****@127.0.0.1:5672/staging", "events.v2"
		}),
	})
	if err != nil {
		t.Fatalf("sending back an edited read sink: %v", err)
	}
	if edited.Sink["url"] != "amqp://hub:****@127.0.0.1:5672/staging" || edited.Sink["exchange"] != "events.v2" || f.dials.Load() == dials {
		t.Errorf("edited sink reads %v after %d dials, want the edit shown and verified", edited.Sink, f.dials.Load()-dials)
	}
	if got := f.storedCredentials(t, created.ID); got != wantCredentials {
		t.Errorf("credentials after an edit that kept the password masked: %s", got)
	}

	for _, refused := range []struct{ name, url string }{
		{"another broker", "amqp://hub:****@127.0.0.2:5672/staging"},
		{"another user", "amqp://admin:****@127.0.0.1:5672/staging"},
	} {
		before := f.raw(t, created.ID)
		_, err := f.rabbit.Update(ctx, "acme", created.ID, hubapi.SubscriptionUpdate{
			Sink: readBackSink(t, edited.Subscription, func(o map[string]any) { o["url"] = refused.url }),
		})
		if code, field := codeOf(err); code != service.CodeInvalidSink || field != "sink.url" {
			t.Errorf("%s with the password masked: err = %v, want invalid_sink on sink.url", refused.name, err)
		}
		if after := f.raw(t, created.ID); !sameRaw(before, after) {
			t.Errorf("%s: a refused update changed the row", refused.name)
		}
	}

	_, _, err = f.rabbit.Create(ctx, "acme", hubapi.SubscriptionCreate{
		Sink: readBackSink(t, edited.Subscription, nil), EventTypes: []string{"*"},
	})
	if code, field := codeOf(err); code != service.CodeInvalidSink || field != "sink.url" {
		t.Errorf("create with the password masked: err = %v, want invalid_sink on sink.url", err)
	}
	if err != nil && strings.Contains(err.Error(), password) {
		t.Errorf("the error shows the password: %v", err)
	}
}
