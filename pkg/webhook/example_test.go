package webhook_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/hubctl/hubctl/pkg/webhook"
)

// The secret is the one returned when the subscription was created or its
// secret rotated, used as is: the "whsec_" prefix is part of the key.
const exampleSecret = "whsec_3q2-7wEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

// Sign is what the hub computes for every attempt; a test of a receiver can
// use it to forge well-signed deliveries.
func ExampleSign() {
	body := []byte(`{"id":"0190b6a2-7c1e-7d3a-9f00-123456789abc","amount":1000,"currency":"BRL"}`)
	fmt.Println(webhook.Sign(exampleSecret, 1767225600, body))
	// Output: v1,sha256=6816b01b8c0be883d823132bfe97763160a4dcd2efbf4fd0399dcfa223649e27
}

// Verify takes the raw header values and body. During a rotation pass both
// secrets; the signature of either one is accepted.
func ExampleVerify() {
	secrets := []string{exampleSecret, "a-plain-secret-of-24-chars!!"} // current, previous
	body := []byte(`{"id":"0190b6a2-7c1e-7d3a-9f00-123456789abc","amount":1000,"currency":"BRL"}`)
	timestamp := "1767225600" // X-Webhook-Timestamp
	signatures := []string{   // every X-Webhook-Signature line
		"v1,sha256=6816b01b8c0be883d823132bfe97763160a4dcd2efbf4fd0399dcfa223649e27",
	}
	// A real receiver passes time.Now(); a fixed clock keeps the example stable.
	now := time.Unix(1767225630, 0)

	err := webhook.Verify(secrets, timestamp, signatures, body, now, webhook.DefaultTolerance)
	fmt.Println("original:", err)

	tampered := bytes.Replace(body, []byte("1000"), []byte("9000"), 1)
	err = webhook.Verify(secrets, timestamp, signatures, tampered, now, webhook.DefaultTolerance)
	if verr, ok := errors.AsType[*webhook.VerifyError](err); ok {
		fmt.Println("tampered:", verr.Reason)
	}

	err = webhook.Verify(secrets, timestamp, signatures, body, now.Add(time.Hour), webhook.DefaultTolerance)
	fmt.Println("replayed an hour later:", err)
	// Output:
	// original: <nil>
	// tampered: signature_mismatch
	// replayed an hour later: webhook: stale_timestamp: timestamp is 1h0m30s behind this clock; tolerance is 5m0s
}

// A receiver's handler reads the body once, with a limit, verifies it, and
// only then decodes and acts on it.
func ExampleVerifyRequest() {
	secrets := []string{exampleSecret}
	receiver := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, webhook.DefaultMaxBodyBytes))
		if err != nil {
			http.Error(w, "cannot read body", http.StatusBadRequest)
			return
		}
		if err := webhook.VerifyRequest(r, body, secrets, time.Now(), webhook.DefaultTolerance); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized) // the message holds no secret
			return
		}
		if r.Header.Get(webhook.HeaderEventType) == webhook.VerificationEventType {
			w.WriteHeader(http.StatusNoContent) // the hub's probe: acknowledging is enough
			return
		}
		// Deliveries are retried, so deduplicate on the event id.
		fmt.Printf("event %s: %s\n", r.Header.Get(webhook.HeaderEventID), body)
		w.WriteHeader(http.StatusNoContent)
	})

	// What the hub sends, simulated here.
	body := []byte(`{"amount":1000}`)
	delivery := httptest.NewRequest(http.MethodPost, "/hooks/hubctl", bytes.NewReader(body))
	delivery.Header.Set(webhook.HeaderEventID, "0190b6a2-7c1e-7d3a-9f00-123456789abc")
	delivery.Header.Set(webhook.HeaderEventType, "transaction.posted")
	webhook.SignHeader(delivery.Header, secrets, time.Now().Unix(), body)

	response := httptest.NewRecorder()
	receiver.ServeHTTP(response, delivery)
	fmt.Println(response.Code)
	// Output:
	// event 0190b6a2-7c1e-7d3a-9f00-123456789abc: {"amount":1000}
	// 204
}

// RequireSignature does the reading and verifying of ExampleVerifyRequest for
// every request, so the handler it wraps sees only authentic deliveries.
func ExampleRequireSignature() {
	secrets := []string{exampleSecret}
	events := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body) // already read and verified; this is a re-read from memory
		fmt.Printf("verified: %s\n", body)
	})
	handler := webhook.RequireSignature(secrets, 0, events)

	body := []byte(`{"amount":1000}`)
	signed := httptest.NewRequest(http.MethodPost, "/hooks/hubctl", bytes.NewReader(body))
	webhook.SignHeader(signed.Header, secrets, time.Now().Unix(), body)
	handler.ServeHTTP(httptest.NewRecorder(), signed)

	forged := httptest.NewRequest(http.MethodPost, "/hooks/hubctl", bytes.NewReader(body))
	webhook.SignHeader(forged.Header, []string{"whsec_guessed-by-an-attacker-000000000"}, time.Now().Unix(), body)
	response := httptest.NewRecorder()
	handler.ServeHTTP(response, forged)
	fmt.Print(response.Code, " ", response.Body.String())
	// Output:
	// verified: {"amount":1000}
	// 401 signature_mismatch
}
