package webhook

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Two Standard Webhooks secrets, as a rotation overlap holds them.
var (
	stdSecret    = StandardSecretPrefix + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	stdOldSecret = StandardSecretPrefix + base64.StdEncoding.EncodeToString([]byte("an-older-key-of-24-bytes"))
)

const stdID = "0190b6a2-7c1e-7d3a-9f00-123456789abc"

// officialVerify runs the official Standard Webhooks Go library, an
// independent implementation, over headers and body.
func officialVerify(t *testing.T, secret string, h http.Header, body []byte) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("official library refuses secret: %v", err)
	}
	return wh.Verify(body, h)
}

func TestSignStandardVerifiedByTheOfficialLibrary(t *testing.T) {
	now := time.Now().Unix()
	for _, tc := range []struct {
		name    string
		secrets []string
	}{
		{"one secret", []string{stdSecret}},
		{"rotation overlap", []string{stdSecret, stdOldSecret}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if err := SignStandardHeader(h, tc.secrets, stdID, now, testBody); err != nil {
				t.Fatal(err)
			}
			if got := len(strings.Fields(h.Get(HeaderWebhookSignature))); got != len(tc.secrets) {
				t.Fatalf("webhook-signature carries %d values, want %d", got, len(tc.secrets))
			}
			// A receiver holding any one of the overlap's secrets verifies.
			for _, secret := range tc.secrets {
				if err := officialVerify(t, secret, h, testBody); err != nil {
					t.Fatalf("official library: %v", err)
				}
			}
			if err := officialVerify(t, stdSecret, h, append(testBody, ' ')); err == nil {
				t.Fatal("official library accepted a changed body")
			}
		})
	}
}

func TestVerifyStandardAcceptsTheOfficialLibrarysSignature(t *testing.T) {
	wh, err := standardwebhooks.NewWebhook(stdSecret)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(testTimestamp, 0)
	signature, err := wh.Sign(stdID, at, testBody)
	if err != nil {
		t.Fatal(err)
	}
	ts := "1767225600"
	cases := []struct {
		name       string
		secrets    []string
		id, ts     string
		signatures []string
		body       []byte
		now        time.Time
		want       string
	}{
		{"theirs", []string{stdSecret}, stdID, ts, []string{signature}, testBody, at, "ok"},
		{"theirs beside an unknown value", []string{stdSecret}, stdID, ts, []string{"v1,AAAA " + signature}, testBody, at, "ok"},
		{"during an overlap", []string{stdOldSecret, stdSecret}, stdID, ts, []string{signature}, testBody, at, "ok"},
		{"other id", []string{stdSecret}, "other", ts, []string{signature}, testBody, at, string(ReasonSignatureMismatch)},
		{"other body", []string{stdSecret}, stdID, ts, []string{signature}, []byte("{}"), at, string(ReasonSignatureMismatch)},
		{"other secret", []string{stdOldSecret}, stdID, ts, []string{signature}, testBody, at, string(ReasonSignatureMismatch)},
		{"stale", []string{stdSecret}, stdID, ts, []string{signature}, testBody, at.Add(6 * time.Minute), string(ReasonStaleTimestamp)},
		{"future", []string{stdSecret}, stdID, ts, []string{signature}, testBody, at.Add(-6 * time.Minute), string(ReasonFutureTimestamp)},
		{"lerian value", []string{stdSecret}, stdID, ts, []string{Sign(stdSecret, testTimestamp, testBody)}, testBody, at, string(ReasonMalformedSignature)},
		{"no id", []string{stdSecret}, "", ts, []string{signature}, testBody, at, string(ReasonMalformedSignature)},
		{"bad timestamp", []string{stdSecret}, stdID, "+1767225600", []string{signature}, testBody, at, string(ReasonMalformedSignature)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyStandard(tc.secrets, tc.id, tc.ts, tc.signatures, tc.body, tc.now, 0)
			if got := reasonOf(t, err); got != tc.want {
				t.Fatalf("VerifyStandard = %s (%v), want %s", got, err, tc.want)
			}
		})
	}
}

func TestVerifyStandardRequestReadsTheHeaders(t *testing.T) {
	now := time.Now()
	r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/", nil)
	// Lower-case names, as the official libraries and most proxies send them.
	wh, _ := standardwebhooks.NewWebhook(stdSecret)
	signature, _ := wh.Sign(stdID, now, testBody)
	r.Header.Set("webhook-id", stdID)
	r.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	r.Header.Set("webhook-signature", signature)
	if err := VerifyStandardRequest(r, testBody, []string{stdSecret}, now, 0); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeStandardSecret(t *testing.T) {
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	for _, tc := range []struct {
		secret string
		ok     bool
	}{
		{"whsec_" + b64(24), true},
		{"whsec_" + b64(32), true},
		{"whsec_" + b64(64), true},
		{"whsec_" + b64(23), false},
		{"whsec_" + b64(65), false},
		{b64(32), false}, // no prefix
		{"whsec_" + base64.RawStdEncoding.EncodeToString(make([]byte, 32)), false}, // no padding
		{"whsec_" + base64.URLEncoding.EncodeToString([]byte(strings.Repeat("\xff", 30))), false},
		{testSecret, false}, // a lerian secret is not base64 of a key
		// encoding/base64 skips CR and LF; the secret is one line.
		{"whsec_" + b64(32)[:20] + "\r\n" + b64(32)[20:], false},
		{"whsec_" + b64(32)[:20] + "\n" + b64(32)[20:], false},
		{"whsec_" + b64(32) + "\r", false},
	} {
		key, err := DecodeStandardSecret(tc.secret)
		if (err == nil) != tc.ok {
			t.Errorf("DecodeStandardSecret(%q) = %v, want ok=%v", tc.secret, err, tc.ok)
		}
		if !tc.ok && !errors.Is(err, ErrStandardSecret) {
			t.Errorf("DecodeStandardSecret(%q) error %v is not ErrStandardSecret", tc.secret, err)
		}
		if tc.ok {
			// The official library decodes it to the same key.
			if _, err := standardwebhooks.NewWebhook(tc.secret); err != nil || len(key) < MinStandardKeyBytes {
				t.Errorf("official library: %v", err)
			}
		}
	}
	if err := VerifyStandard([]string{testSecret}, stdID, "1", nil, nil, time.Unix(1, 0), 0); !errors.Is(err, ErrStandardSecret) {
		t.Fatalf("VerifyStandard with a lerian secret = %v, want ErrStandardSecret", err)
	}
	if err := VerifyStandard([]string{""}, stdID, "1", nil, nil, time.Unix(1, 0), 0); !errors.Is(err, ErrNoSecrets) {
		t.Fatalf("VerifyStandard without secrets = %v, want ErrNoSecrets", err)
	}
}

// FuzzVerifyStandard: any input yields nil or a contract Reason, never a
// panic, and the error never quotes a secret.
func FuzzVerifyStandard(f *testing.F) {
	sig, _ := SignStandard([]string{stdSecret}, stdID, testTimestamp, testBody)
	f.Add(stdID, "1767225600", sig, testBody, testTimestamp)
	f.Add("", "x", "v1,==== v1,", []byte(nil), int64(0))
	f.Fuzz(func(t *testing.T, id, timestamp, signatures string, body []byte, nowUnix int64) {
		err := VerifyStandard([]string{stdSecret, stdOldSecret}, id, timestamp, strings.Split(signatures, "\n"), body, time.Unix(nowUnix, 0), 0)
		if err == nil {
			return
		}
		if _, ok := errors.AsType[*VerifyError](err); !ok {
			t.Fatalf("VerifyStandard returned %v, want nil or a *VerifyError", err)
		}
		if strings.Contains(err.Error(), stdSecret) {
			t.Fatalf("error %q leaks a secret", err)
		}
	})
}
