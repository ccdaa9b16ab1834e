package listen

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hubctl/hubctl/pkg/webhook"
)

// TestReceiverVerifiesStandardWebhooks: with --scheme standard-webhooks a
// request signed by the official library is accepted and one signed the
// lerian way is refused.
func TestReceiverVerifiesStandardWebhooks(t *testing.T) {
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("listen-key-of-exactly-32-bytes!!"))
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	const body = `{"amount":1}`
	theirs := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
	signature, err := wh.Sign("ev-1", testNow, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	theirs.Header.Set("webhook-id", "ev-1")
	theirs.Header.Set("webhook-timestamp", strconv.FormatInt(testNow.Unix(), 10))
	theirs.Header.Set("webhook-signature", signature)
	theirs.Header.Set(webhook.HeaderEventID, "ev-1")
	theirs.Header.Set(webhook.HeaderEventType, "transaction.posted")

	var out bytes.Buffer
	opts := options{secrets: []string{secret}, scheme: webhook.SchemeStandardWebhooks, status: 503, format: formatText}
	if err := opts.check(); err != nil {
		t.Fatal(err)
	}
	rc := newReceiver(opts, &out, func() time.Time { return testNow }, func() float64 { return 0.5 })
	for _, tc := range []struct {
		r    *http.Request
		want int
	}{
		{theirs, http.StatusOK},
		{signed(secret, "transaction.posted", "ev-2", "del-2", body), http.StatusUnauthorized},
	} {
		w := httptest.NewRecorder()
		rc.ServeHTTP(w, tc.r)
		if w.Code != tc.want {
			t.Errorf("answered %d, want %d (%s)", w.Code, tc.want, out.String())
		}
	}
	if !strings.Contains(out.String(), "event=ev-1 delivery=- ok") || !strings.Contains(out.String(), "malformed_signature") {
		t.Errorf("printed %q", out.String())
	}
}

func TestSchemeOptionIsChecked(t *testing.T) {
	base := options{secrets: []string{testSecret}, status: 500, format: formatText}
	for _, tc := range []struct {
		scheme string
		ok     bool
	}{{webhook.SchemeLerian, true}, {"svix", false}, {webhook.SchemeStandardWebhooks, false}} {
		o := base
		o.scheme = tc.scheme
		// testSecret is not whsec_ + base64 of a key, so standard-webhooks refuses it.
		if err := o.check(); (err == nil) != tc.ok {
			t.Errorf("scheme %q: check() = %v, want ok=%v", tc.scheme, err, tc.ok)
		}
	}
}
