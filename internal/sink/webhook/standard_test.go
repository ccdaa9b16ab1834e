package webhook

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/testutil/httprecord"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

var (
	stdNewSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("sink-new-key-of-exactly-32-bytes"))
	stdOldSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("sink-old-key-of-24-bytes"))
)

func openStandardSink(t *testing.T, typ *Type, rawURL string, secrets ...string) (sink.Sink, error) {
	t.Helper()
	public, err := json.Marshal(publicConfig{URL: rawURL})
	if err != nil {
		t.Fatal(err)
	}
	return typ.Open(sink.Config{Public: public, SignatureScheme: whsign.SchemeStandardWebhooks}, secrets)
}

// officialVerifies reports whether the official Standard Webhooks library,
// holding secret, accepts the request.
func officialVerifies(t *testing.T, secret string, req httprecord.Request) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(req.Body, req.Header)
}

// TestStandardWebhooksDeliveriesAndProbesVerifyWithTheOfficialLibrary:
// deliveries (a first attempt and its retry) and probes, signed during a
// rotation overlap, verify with the official library holding either
// secret; webhook-id is the event id on every attempt; X-Lerian-* stay.
func TestStandardWebhooksDeliveriesAndProbesVerifyWithTheOfficialLibrary(t *testing.T) {
	rcv := startReceiver(t, nil)
	// The official library checks against the real clock.
	typ := newTestType(t, Options{AllowPrivate: true, Now: time.Now})
	s, err := openStandardSink(t, typ, rcv.hookURL(), stdNewSecret, stdOldSecret)
	if err != nil {
		t.Fatal(err)
	}
	d := testDelivery()
	for range 2 {
		if out := s.Deliver(t.Context(), d); !out.OK {
			t.Fatalf("Deliver: %+v", out)
		}
	}
	if err := s.Probe(t.Context(), sink.ProbeRequest{SubscriptionID: "0190f5c2-0000-7000-8000-000000000001", TenantID: "acme", Timeout: time.Second}); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	got := rcv.Requests()
	if len(got) != 3 {
		t.Fatalf("receiver got %d requests, want 3", len(got))
	}
	for i, req := range got {
		for _, secret := range []string{stdNewSecret, stdOldSecret} {
			if err := officialVerifies(t, secret, req); err != nil {
				t.Errorf("request %d: official library: %v", i, err)
			}
		}
		if req.Header.Get(whsign.HeaderSignature) != "" || req.Header.Get(whsign.HeaderTimestamp) != "" {
			t.Errorf("request %d also carries the lerian signature headers", i)
		}
		if req.Header.Get(whsign.HeaderEventID) == "" || req.Header.Get(whsign.HeaderDeliveryID) == "" {
			t.Errorf("request %d lost the X-Lerian-* headers: %v", i, req.Header)
		}
		if req.Header.Get("webhook-id") != req.Header.Get(whsign.HeaderEventID) {
			t.Errorf("request %d: webhook-id %q is not the event id %q", i, req.Header.Get("webhook-id"), req.Header.Get(whsign.HeaderEventID))
		}
	}
	if got[0].Header.Get("webhook-id") != d.EventID || got[1].Header.Get("webhook-id") != d.EventID {
		t.Errorf("webhook-id changed across attempts")
	}
	// After the overlap, only the new secret signs; the old one no longer verifies.
	s2, err := openStandardSink(t, typ, rcv.hookURL(), stdNewSecret)
	if err != nil {
		t.Fatal(err)
	}
	if out := s2.Deliver(t.Context(), d); !out.OK {
		t.Fatalf("Deliver: %+v", out)
	}
	last := rcv.Requests()[3]
	if err := officialVerifies(t, stdOldSecret, last); err == nil {
		t.Error("the rotated-out secret still verifies after the overlap")
	}
	if err := whsign.VerifyStandardRequest(&http.Request{Header: last.Header}, last.Body, []string{stdNewSecret}, time.Now(), 0); err != nil {
		t.Errorf("our verifier: %v", err)
	}
}

func TestStandardWebhooksOpenRefusesOtherSecrets(t *testing.T) {
	typ := newTestType(t, Options{AllowPrivate: true})
	if _, err := openStandardSink(t, typ, "http://127.0.0.1:1/", newSecret); err == nil {
		t.Fatal("Open took a secret that is not whsec_ + base64 of a key")
	}
	public, _ := json.Marshal(publicConfig{URL: "http://127.0.0.1:1/"})
	if _, err := typ.Open(sink.Config{Public: public, SignatureScheme: "svix"}, []string{stdNewSecret}); err == nil {
		t.Fatal("Open took an unknown scheme")
	}
}
