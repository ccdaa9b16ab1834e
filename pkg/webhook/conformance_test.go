package webhook_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/conformance"
	"github.com/hubctl/hubctl/pkg/webhook"
)

func decodeBody(t *testing.T, b64 string) []byte {
	t.Helper()
	body, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("body_base64: %v", err)
	}
	return body
}

func TestConformance(t *testing.T) {
	// The loader rejects unknown fields and sections, so a vector the
	// contract grows later fails this test until it is understood rather
	// than being skipped.
	vectors, err := conformance.LoadSignatures()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("sign", func(t *testing.T) {
		for _, tc := range vectors.Sign {
			t.Run(tc.Name, func(t *testing.T) {
				body := decodeBody(t, tc.BodyBase64)
				ts, err := webhook.ParseTimestamp(tc.Timestamp)
				if err != nil {
					t.Fatalf("ParseTimestamp(%q): %v", tc.Timestamp, err)
				}
				if got := webhook.Sign(tc.Secret, ts, body); got != tc.ExpectedSignature {
					t.Fatalf("Sign = %s, want %s", got, tc.ExpectedSignature)
				}
				// What the hub signs, a receiver must accept.
				if err := webhook.Verify([]string{tc.Secret}, tc.Timestamp, []string{tc.ExpectedSignature}, body, time.Unix(ts, 0), 0); err != nil {
					t.Fatalf("Verify of the expected signature: %v", err)
				}
			})
		}
	})

	t.Run("verify", func(t *testing.T) {
		for _, tc := range vectors.Verify {
			t.Run(tc.Name, func(t *testing.T) {
				body := decodeBody(t, tc.BodyBase64)
				now := time.Unix(tc.Now, 0)
				tolerance := time.Duration(tc.ToleranceSeconds) * time.Second

				err := webhook.Verify(tc.Secrets, tc.Timestamp, tc.SignatureHeaders, body, now, tolerance)
				checkVerdict(t, "Verify", err, tc.Expect, tc.Secrets)

				// The same case through the HTTP path: every signature as its own header line.
				r := httptest.NewRequest(http.MethodPost, "/hook", bytes.NewReader(body))
				r.Header.Set(webhook.HeaderTimestamp, tc.Timestamp)
				for _, line := range tc.SignatureHeaders {
					r.Header.Add(webhook.HeaderSignature, line)
				}
				err = webhook.VerifyRequest(r, body, tc.Secrets, now, tolerance)
				checkVerdict(t, "VerifyRequest", err, tc.Expect, tc.Secrets)
			})
		}
	})
}

func checkVerdict(t *testing.T, call string, err error, expect string, secrets []string) {
	t.Helper()
	if expect == "ok" {
		if err != nil {
			t.Fatalf("%s: %v, want ok", call, err)
		}
		return
	}
	verr, ok := errors.AsType[*webhook.VerifyError](err)
	if !ok {
		t.Fatalf("%s: error %v is not a *VerifyError, want reason %s", call, err, expect)
	}
	if string(verr.Reason) != expect {
		t.Fatalf("%s: reason %s, want %s (%v)", call, verr.Reason, expect, err)
	}
	for _, secret := range secrets {
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("%s: error message %q leaks a secret", call, err)
		}
	}
}
