package service_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/pkg/hubapi"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

var stdCallerSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("a-caller-chosen-key-24b!"))

// TestSignatureSchemeRules: the scheme is a webhook's alone, one of two
// names; a standard-webhooks secret, generated or the caller's, is what
// the official libraries decode, everywhere a secret is set.
func TestSignatureSchemeRules(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	std := whsign.SchemeStandardWebhooks
	withScheme := func(in hubapi.SubscriptionCreate, scheme, secret string) hubapi.SubscriptionCreate {
		in.SignatureScheme, in.SigningSecret = scheme, secret
		return in
	}
	pull := hubapi.SubscriptionCreate{Name: "feed", Sink: json.RawMessage(`{"type":"pull"}`), EventTypes: []string{"*"}}
	for _, tc := range []struct {
		name  string
		in    hubapi.SubscriptionCreate
		field string
	}{
		{"on a pull sink", withScheme(pull, std, ""), "signature_scheme"},
		{"lerian on a pull sink", withScheme(pull, whsign.SchemeLerian, ""), "signature_scheme"},
		{"unknown scheme", withScheme(webhookInput("https://hooks.test/a"), "svix", ""), "signature_scheme"},
		{"lerian-style secret", withScheme(webhookInput("https://hooks.test/a"), std, "a-long-enough-lerian-style-secret"), "signing_secret"},
		{"url-safe base64", withScheme(webhookInput("https://hooks.test/a"), std, "whsec_"+base64.RawURLEncoding.EncodeToString([]byte("a-caller-chosen-key-24b?"))), "signing_secret"},
		{"too short a key", withScheme(webhookInput("https://hooks.test/a"), std, "whsec_"+base64.StdEncoding.EncodeToString([]byte("twenty-three-bytes-key!"))), "signing_secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := f.svc.Create(ctx, "acme", tc.in)
			if code, field := codeOf(err); code != hubapi.CodeInvalidRequest || field != tc.field {
				t.Errorf("code %q field %q (%v), want %s on %s", code, field, err, hubapi.CodeInvalidRequest, tc.field)
			}
		})
	}

	sub, secret := f.create(t, "acme", withScheme(webhookInput("https://hooks.test/a"), std, ""))
	if _, err := whsign.DecodeStandardSecret(secret); err != nil || sub.SignatureScheme != std {
		t.Errorf("generated %q (%v), scheme %q", secret, err, sub.SignatureScheme)
	}
	mine, mySecret := f.create(t, "acme", withScheme(webhookInput("https://hooks.test/a"), std, stdCallerSecret))
	if mySecret != stdCallerSecret {
		t.Errorf("the caller's secret came back as %q", mySecret)
	}
	if got, err := f.svc.Get(ctx, "acme", mine.ID); err != nil || got.SignatureScheme != std || got.SigningSecret != hubapi.Masked {
		t.Errorf("read: scheme %q secret %q, %v", got.SignatureScheme, got.SigningSecret, err)
	}
	page, err := f.svc.List(ctx, "acme", hubapi.ListParams{})
	if err != nil || len(page.Items) != 2 || page.Items[0].SignatureScheme != std {
		t.Errorf("list: %+v, %v", page.Items, err)
	}

	// Rotation keeps the scheme's form.
	if code, field := codeOf(mustErr(f.svc.RotateSecret(ctx, "acme", sub.ID, "a-long-enough-lerian-style-secret"))); code != hubapi.CodeInvalidRequest || field != "signing_secret" {
		t.Errorf("rotating to a lerian-style secret: %q %q", code, field)
	}
	rotated, err := f.svc.RotateSecret(ctx, "acme", sub.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := whsign.DecodeStandardSecret(rotated.SigningSecret); err != nil {
		t.Errorf("generated rotation %q: %v", rotated.SigningSecret, err)
	}

	// A switch back to lerian with the caller's secret rotates to it and
	// shows no secret; a switch without one answers the generated secret.
	lerian, ownSecret := whsign.SchemeLerian, "back-to-lerian-with-my-own-secret"
	back, err := f.svc.Update(ctx, "acme", sub.ID, hubapi.SubscriptionUpdate{SignatureScheme: &lerian, SigningSecret: &ownSecret})
	if err != nil || back.SignatureScheme != lerian || back.SigningSecret != hubapi.Masked || back.PreviousSecretExpiresAt == nil {
		t.Errorf("switch with the caller's secret: %+v, %v", back, err)
	}
	forth, err := f.svc.Update(ctx, "acme", sub.ID, hubapi.SubscriptionUpdate{SignatureScheme: &std})
	if err != nil || !strings.HasPrefix(forth.SigningSecret, "whsec_") {
		t.Fatalf("switch without a secret: %+v, %v", forth, err)
	}
	if _, err := whsign.DecodeStandardSecret(forth.SigningSecret); err != nil {
		t.Errorf("switch generated %q: %v", forth.SigningSecret, err)
	}
	bad := "still-a-lerian-style-secret-here"
	if code, field := codeOf(mustErr(f.svc.Update(ctx, "acme", mine.ID, hubapi.SubscriptionUpdate{SigningSecret: &bad}))); code != hubapi.CodeInvalidRequest || field != "signing_secret" {
		t.Errorf("PATCH to a lerian-style secret on a standard-webhooks subscription: %q %q", code, field)
	}
	pullSub, _ := f.create(t, "acme", pull)
	if code, field := codeOf(mustErr(f.svc.Update(ctx, "acme", pullSub.ID, hubapi.SubscriptionUpdate{SignatureScheme: &std}))); code != hubapi.CodeInvalidRequest || field != "signature_scheme" {
		t.Errorf("PATCH signature_scheme on a pull sink: %q %q", code, field)
	}
	if got, _ := f.svc.Get(ctx, "acme", pullSub.ID); got.SignatureScheme != "" {
		t.Errorf("a pull subscription shows signature_scheme %q", got.SignatureScheme)
	}
}
