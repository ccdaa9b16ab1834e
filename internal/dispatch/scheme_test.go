package dispatch

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/testutil/httprecord"
	"github.com/hubctl/hubctl/internal/testutil/syncbuf"
	"github.com/hubctl/hubctl/pkg/hubapi"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

// nthRequest waits for the n-th request rc recorded and returns it.
func nthRequest(t *testing.T, rc *httprecord.Server, n int) httprecord.Request {
	t.Helper()
	waitFor(t, fmt.Sprintf("request %d", n), func() bool { return len(rc.Requests()) >= n })
	return rc.Requests()[n-1]
}

func isProbe(r httprecord.Request) bool {
	return r.Header.Get(whsign.HeaderEventType) == whsign.VerificationEventType
}

// official verifies r with the official Standard Webhooks library holding
// secret.
func official(t *testing.T, secret string, r httprecord.Request) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("the official library refuses secret %q: %v", secret, err)
	}
	return wh.Verify(r.Body, r.Header)
}

// TestStandardWebhooksThroughDispatchVerifyWithTheOfficialLibrary runs a
// standard-webhooks subscription through the real path (create and its
// probe, Verify, claims, the sink cache, attempts): the official library
// verifies the probes and deliveries, and during a rotation overlap
// accepts either secret from the two space-separated signatures.
func TestStandardWebhooksThroughDispatchVerifyWithTheOfficialLibrary(t *testing.T) {
	e := newEnv(t)
	rc := httprecord.Start(t, httprecord.Options{})
	subID, secret := e.webhookSub("acme", rc.URL, func(in *hubapi.SubscriptionCreate) { in.SignatureScheme = whsign.SchemeStandardWebhooks })
	if _, err := whsign.DecodeStandardSecret(secret); err != nil {
		t.Fatalf("generated secret %q: %v", secret, err)
	}
	probe := nthRequest(t, rc, 1)
	if !isProbe(probe) {
		t.Fatalf("first request is not the probe: %v", probe.Header)
	}
	if err := official(t, secret, probe); err != nil {
		t.Errorf("official library on the create probe: %v", err)
	}
	e.start()
	e.insertJobs("acme", subID, 1)
	first := nthRequest(t, rc, 2)
	if err := official(t, secret, first); err != nil {
		t.Errorf("official library on a delivery: %v", err)
	}
	if first.Header.Get(whsign.HeaderSignature) != "" {
		t.Errorf("a standard-webhooks delivery carries %s", whsign.HeaderSignature)
	}
	if first.Header.Get("webhook-id") != first.Header.Get(whsign.HeaderEventID) {
		t.Errorf("webhook-id %q is not the event id %q", first.Header.Get("webhook-id"), first.Header.Get(whsign.HeaderEventID))
	}

	rotated, err := e.subs.RotateSecret(context.Background(), "acme", subID.String(), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := whsign.DecodeStandardSecret(rotated.SigningSecret); err != nil {
		t.Fatalf("rotated secret %q: %v", rotated.SigningSecret, err)
	}
	e.insertJobs("acme", subID, 1)
	overlap := nthRequest(t, rc, 3)
	if got := strings.Fields(overlap.Header.Get("webhook-signature")); len(got) != 2 {
		t.Errorf("overlap webhook-signature %q, want two space-separated values", overlap.Header.Get("webhook-signature"))
	}
	for _, s := range []string{rotated.SigningSecret, secret} {
		if err := official(t, s, overlap); err != nil {
			t.Errorf("official library during the overlap: %v", err)
		}
	}
	if _, err := e.subs.Verify(context.Background(), "acme", subID.String()); err != nil {
		t.Fatal(err)
	}
	reprobe := nthRequest(t, rc, 4)
	if !isProbe(reprobe) {
		t.Fatalf("request 4 is not the probe: %v", reprobe.Header)
	}
	for _, s := range []string{rotated.SigningSecret, secret} {
		if err := official(t, s, reprobe); err != nil {
			t.Errorf("official library on a probe during the overlap: %v", err)
		}
	}
	wrong := "whsec_" + base64.StdEncoding.EncodeToString([]byte("a-key-nobody-configured-32bytes!"))
	if err := official(t, wrong, overlap); err == nil {
		t.Error("the official library accepted a delivery under a secret that never signed it")
	}
}

// TestSwitchingSchemeKeepsTheOldReceiverVerifying: a switch from lerian to
// standard-webhooks rotates the secret; until the overlap ends each
// delivery is signed both ways, the new secret in webhook-signature (the
// official library verifies it) and the old one in X-Webhook-Signature (the
// receiver not yet switched verifies it as before).
func TestSwitchingSchemeKeepsTheOldReceiverVerifying(t *testing.T) {
	e := newEnv(t)
	rc := httprecord.Start(t, httprecord.Options{})
	subID, oldSecret := e.webhookSub("acme", rc.URL)
	e.start()
	scheme := whsign.SchemeStandardWebhooks
	updated, err := e.subs.Update(context.Background(), "acme", subID.String(), hubapi.SubscriptionUpdate{SignatureScheme: &scheme})
	if err != nil {
		t.Fatal(err)
	}
	newSecret := updated.SigningSecret
	if _, err := whsign.DecodeStandardSecret(newSecret); err != nil {
		t.Fatalf("the switch returned %q: %v", newSecret, err)
	}
	if updated.SignatureScheme != scheme || updated.PreviousSecretExpiresAt == nil {
		t.Errorf("after the switch: scheme %q, overlap until %v", updated.SignatureScheme, updated.PreviousSecretExpiresAt)
	}
	e.insertJobs("acme", subID, 1)
	got := nthRequest(t, rc, 2) // 1 is the create probe
	if isProbe(got) {
		t.Fatal("the switch re-probed the destination")
	}
	if err := official(t, newSecret, got); err != nil {
		t.Errorf("official library with the new secret: %v", err)
	}
	r := &http.Request{Header: got.Header}
	if err := whsign.VerifyRequest(r, got.Body, []string{oldSecret}, time.Now(), 0); err != nil {
		t.Errorf("the lerian verifier with the old secret: %v", err)
	}
	if err := whsign.VerifyRequest(r, got.Body, []string{newSecret}, time.Now(), 0); err == nil {
		t.Error("the new secret also signs X-Webhook-Signature")
	}

	// A read sent back keeps the scheme and rotates nothing.
	again, err := e.subs.Update(context.Background(), "acme", subID.String(), hubapi.SubscriptionUpdate{SignatureScheme: &scheme})
	if err != nil || again.SigningSecret != hubapi.Masked || !again.UpdatedAt.Equal(updated.UpdatedAt) {
		t.Errorf("resending the scheme: secret %q, updated %v (was %v), %v", again.SigningSecret, again.UpdatedAt, updated.UpdatedAt, err)
	}
}

// TestHeadersAndAuthReachTheReceiverAndNoLog: a webhook's custom headers
// and auth arrive on the probe and on every attempt through dispatch, a
// retry included; reads mask the credential and take the mask back; and
// neither the password nor the token appears in anything dispatch logs.
func TestHeadersAndAuthReachTheReceiverAndNoLog(t *testing.T) {
	for _, tc := range []struct {
		name, auth, secret, want string
	}{
		{"basic", `{"type":"basic","username":"hub","password":"pw-never-logged-7f3a"}`, "pw-never-logged-7f3a",
			"Basic " + base64.StdEncoding.EncodeToString([]byte("hub:pw-never-logged-7f3a"))},
		{"bearer", `{"type":"bearer","token":"tok-never-logged-9c1d"}`, "tok-never-logged-9c1d", "Bearer tok-never-logged-9c1d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			var logs syncbuf.Buffer
			// The first delivery fails, so a retry follows.
			srv := httprecord.Start(t, httprecord.Options{Respond: func(w http.ResponseWriter, _ *http.Request, n int) {
				if n == 2 {
					w.WriteHeader(http.StatusInternalServerError)
					return
				}
				w.WriteHeader(http.StatusNoContent)
			}})
			e.tenant("acme")
			for _, refused := range []string{`"Host":"evil.example"`, `"x-lerian-tenant-id":"globex"`, `"Authorization":"Basic eA=="`} {
				_, _, err := e.subs.Create(context.Background(), "acme", hubapi.SubscriptionCreate{
					Name: "refused", EventTypes: []string{"*"},
					Sink: json.RawMessage(`{"type":"webhook","url":` + quote(srv.URL) + `,"headers":{` + refused + `},"auth":` + tc.auth + `}`),
				})
				var invalid *hubapi.ValidationError
				if !errors.As(err, &invalid) || invalid.Code != service.CodeInvalidSink || !strings.HasPrefix(invalid.Field, "sink.headers.") {
					t.Errorf("headers {%s}: %v, want invalid_sink on sink.headers.*", refused, err)
				}
				if err != nil && strings.Contains(err.Error(), tc.secret) {
					t.Errorf("the refusal quotes the credential: %v", err)
				}
			}
			view, _, err := e.subs.Create(context.Background(), "acme", hubapi.SubscriptionCreate{
				Name: "authed", EventTypes: []string{"*"}, RetrySchedule: []string{"0s", "0s"},
				Sink: json.RawMessage(`{"type":"webhook","url":` + quote(srv.URL) + `,"headers":{"X-Api-Version":"2"},"auth":` + tc.auth + `}`),
			})
			if err != nil || view.VerificationState != "active" {
				t.Fatalf("create: %+v, %v", view, err)
			}
			_, _ = e.start(func(o *Options) {
				o.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			})
			subID := uuid.MustParse(view.ID)
			e.insertJobs("acme", subID, 1)
			waitFor(t, "the retry to succeed", func() bool { return e.jobStates(subID)["succeeded"] == 1 })
			requests := srv.Requests()
			if len(requests) != 3 {
				t.Fatalf("receiver got %d requests, want probe, failure, retry", len(requests))
			}
			for i, r := range requests {
				if r.Header.Get("Authorization") != tc.want || r.Header.Get("X-Api-Version") != "2" {
					t.Errorf("request %d: Authorization %q, X-Api-Version %q", i, r.Header.Get("Authorization"), r.Header.Get("X-Api-Version"))
				}
			}

			read, err := e.subs.Get(context.Background(), "acme", view.ID)
			if err != nil {
				t.Fatal(err)
			}
			page, err := e.subs.List(context.Background(), "acme", hubapi.ListParams{})
			if err != nil {
				t.Fatal(err)
			}
			for what, v := range map[string]any{"create": view, "get": read, "list": page} {
				raw, _ := json.Marshal(v)
				if strings.Contains(string(raw), tc.secret) || !strings.Contains(string(raw), `"`+hubapi.Masked+`"`) {
					t.Errorf("%s shows %s", what, raw)
				}
			}
			// The read sent back keeps the credential: nothing changes, no re-probe.
			rawSink, _ := json.Marshal(read.Sink)
			same, err := e.subs.Update(context.Background(), "acme", view.ID, hubapi.SubscriptionUpdate{Sink: rawSink})
			if err != nil || !same.UpdatedAt.Equal(read.UpdatedAt) {
				t.Errorf("read sent back: %v, updated %v (was %v)", err, same.UpdatedAt, read.UpdatedAt)
			}
			var stored string
			if err := e.store.Pool.QueryRow(context.Background(), `SELECT sink_config::text || coalesce(sink_credentials, '') FROM subscriptions WHERE id = $1`, subID).Scan(&stored); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(stored, tc.secret) {
				t.Errorf("the credential is stored in the clear: %s", stored)
			}
			e.insertJobs("acme", subID, 1)
			waitFor(t, "the second event", func() bool { return e.jobStates(subID)["succeeded"] == 2 })
			if logs.String() == "" {
				t.Fatal("dispatch logged nothing; the check below would hold vacuously")
			}
			if strings.Contains(logs.String(), tc.secret) || strings.Contains(logs.String(), tc.want) {
				t.Errorf("the credential reached the logs:\n%s", logs.String())
			}
		})
	}
}
