package api

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/hubctl/hubctl/pkg/client"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// TestGoClientKeepsToTheContract drives pkg/client's calls through the
// contract check: each request it sends must be one the document accepts,
// and each answer it decodes one the document describes. Refusals the
// client provokes on purpose are checked the same way, as errors.
func TestGoClientKeepsToTheContract(t *testing.T) {
	h := newHarness(t, testAdminToken)
	ctx := context.Background()
	admin, err := client.New(h.url, client.WithToken(testAdminToken))
	if err != nil {
		t.Fatal(err)
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	wantCode := func(what string, err error, code string) {
		t.Helper()
		var apiErr *hubapi.Error
		if !errors.As(err, &apiErr) || apiErr.Code != code {
			t.Fatalf("%s: %v, want the code %s", what, err, code)
		}
	}

	_, err = admin.CreateTenant(ctx, "acme")
	must("create tenant", err)
	_, err = admin.CreateTenant(ctx, "acme")
	wantCode("create tenant twice", err, "tenant_already_exists")
	_, err = admin.ListTenants(ctx, hubapi.ListParams{Limit: 10})
	must("list tenants", err)
	_, err = admin.GetTenant(ctx, "acme")
	must("get tenant", err)
	_, err = admin.SetTenantStatus(ctx, "acme", "active")
	must("set status", err)
	key, err := admin.CreateAPIKey(ctx, "acme", "ci")
	must("create key", err)
	_, err = admin.ListAPIKeys(ctx, "acme", hubapi.ListParams{})
	must("list keys", err)
	_, err = admin.ListQuarantine(ctx, hubapi.QuarantineListParams{Reason: "invalid_time"})
	must("list quarantine", err)
	_, err = admin.GetQuarantined(ctx, "1")
	wantCode("get a missing quarantined record", err, "quarantine_not_found")

	tenant, err := client.New(h.url, client.WithToken(key.Key))
	must("tenant client", err)
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	pull, err := tenant.CreateSubscription(ctx, "", hubapi.SubscriptionCreate{
		Name: "ledger feed", Sink: []byte(`{"type":"pull"}`), EventTypes: []string{"*"},
	})
	must("create subscription", err)
	_, err = tenant.ListSubscriptions(ctx, "", hubapi.ListParams{Limit: 1})
	must("list subscriptions", err)
	_, err = tenant.GetSubscription(ctx, "", pull.ID)
	must("get subscription", err)
	renamed := "ledger feed v2"
	_, err = tenant.UpdateSubscription(ctx, "", pull.ID, hubapi.SubscriptionUpdate{Name: &renamed, Origin: hubapi.SetNull[string]()})
	must("update subscription", err)
	_, err = tenant.DisableSubscription(ctx, "", pull.ID)
	must("disable", err)
	_, err = tenant.EnableSubscription(ctx, "", pull.ID)
	must("enable", err)
	_, err = tenant.VerifySubscription(ctx, "", pull.ID)
	must("verify", err)
	_, err = tenant.RotateSecret(ctx, "", pull.ID, "")
	wantCode("rotate a pull subscription's secret", err, "not_a_webhook_subscription")
	_, err = tenant.RecoverSubscription(ctx, "", pull.ID, hubapi.SubscriptionRecover{Since: since, DryRun: true}, nil)
	wantCode("recover a pull subscription", err, "not_a_push_subscription")
	_, err = tenant.ListDeliveries(ctx, "", pull.ID, hubapi.DeliveryListParams{State: "dead"})
	must("list deliveries", err)
	_, err = tenant.GetDelivery(ctx, "", pull.ID)
	wantCode("get a missing delivery", err, "delivery_not_found")
	_, err = tenant.ListEvents(ctx, "", hubapi.EventListParams{EventFilter: hubapi.EventFilter{Type: "transaction.posted", Since: since}})
	must("list inbox", err)
	_, err = tenant.GetEvent(ctx, "", "evt-1")
	wantCode("get a missing event", err, "event_not_found")
	after := int64(0)
	_, err = tenant.ReadEvents(ctx, "", pull.ID, hubapi.PullParams{Limit: 10, After: &after})
	must("read events", err)
	_, err = tenant.ListDeadLetters(ctx, "", hubapi.DeadLetterListParams{DeadLetterFilter: hubapi.DeadLetterFilter{SubscriptionID: pull.ID, Reason: "exhausted", Since: since}})
	must("list dead letters", err)
	_, err = tenant.ReplayDeadLetters(ctx, "", hubapi.DeadLetterReplay{SubscriptionID: pull.ID, DryRun: true})
	must("replay dead letters", err)
	_, err = tenant.DeleteSubscription(ctx, "", pull.ID)
	must("delete subscription", err)
	_, err = tenant.ListTenants(ctx, hubapi.ListParams{})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusForbidden {
		t.Fatalf("a tenant key on /admin: %v, want 403", err)
	}
	_, err = admin.RevokeAPIKey(ctx, "acme", key.ID)
	must("revoke key", err)
}
