package sig_test

import (
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hubctl/hubctl/internal/cli/clitest"
)

var (
	whsecNew = "whsec_" + base64.StdEncoding.EncodeToString([]byte("new-key-of-exactly-32-bytes-long"))
	whsecOld = "whsec_" + base64.StdEncoding.EncodeToString([]byte("old-key-of-24-bytes-long"))
)

const stdEventID = "0190b6a2-7c1e-7d3a-9f00-123456789abc"

// parseHeaderLines reads "Name: value" lines as sign prints them.
func parseHeaderLines(t *testing.T, out string) http.Header {
	t.Helper()
	h := http.Header{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, value, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("not a header line: %q", line)
		}
		h.Add(name, value)
	}
	return h
}

// TestSignStandardWebhooksVerifiedByTheOfficialLibrary: what `hubctl sig
// sign --scheme standard-webhooks` prints, during a rotation overlap, is
// accepted by the official library with either secret, and by our verify.
func TestSignStandardWebhooksVerifiedByTheOfficialLibrary(t *testing.T) {
	const body = `{"amount":1000}`
	signed := clitest.RunWithStdin(t, nil, body, "sig", "sign", "--scheme", "standard-webhooks",
		"--secret", whsecNew, "--secret", whsecOld, "--id", stdEventID)
	if signed.Code != 0 {
		t.Fatalf("sign: %d %q", signed.Code, signed.Stderr)
	}
	h := parseHeaderLines(t, signed.Stdout)
	if got := h.Get("webhook-id"); got != stdEventID {
		t.Fatalf("webhook-id %q, want %q", got, stdEventID)
	}
	for _, secret := range []string{whsecNew, whsecOld} {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify([]byte(body), h); err != nil {
			t.Errorf("official library with one of the overlap's secrets: %v", err)
		}
	}
	headers := filepath.Join(t.TempDir(), "headers")
	if err := os.WriteFile(headers, []byte(signed.Stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := clitest.RunWithStdin(t, nil, body, "sig", "verify", "--scheme", "standard-webhooks", "--secret", whsecOld, "--headers-file", headers); res.Code != 0 {
		t.Errorf("verify: %d %q", res.Code, res.Stderr)
	}
}

// TestVerifyStandardWebhooksAcceptsTheOfficialLibrarysSignature: a
// signature made by the official library passes `hubctl sig verify`, and
// fails with the contract reason once anything signed changes.
func TestVerifyStandardWebhooksAcceptsTheOfficialLibrarysSignature(t *testing.T) {
	const body = `{"amount":1000}`
	wh, err := standardwebhooks.NewWebhook(whsecNew)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	signature, err := wh.Sign(stdEventID, now, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	args := func(id string) []string {
		return []string{"sig", "verify", "--scheme", "standard-webhooks", "--secret", whsecNew, "--id", id, "--timestamp", ts, "--signature", signature}
	}
	if res := clitest.RunWithStdin(t, nil, body, args(stdEventID)...); res.Code != 0 {
		t.Fatalf("verify theirs: %d %q", res.Code, res.Stderr)
	}
	if res := clitest.RunWithStdin(t, nil, body, args("another-id")...); res.Code != 1 || !strings.HasPrefix(res.Stderr, "signature_mismatch") {
		t.Fatalf("verify with another id: %d %q", res.Code, res.Stderr)
	}
}

func TestSigStandardWebhooksUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"sig", "sign", "--scheme", "svix", "--secret", whsecNew},
		{"sig", "sign", "--scheme", "standard-webhooks", "--secret", whsecNew},                                               // no --id
		{"sig", "sign", "--scheme", "standard-webhooks", "--secret", "whsec_not base64!", "--id", stdEventID},                // not a whsec secret
		{"sig", "sign", "--scheme", "standard-webhooks", "--secret", "whsec_AAAA", "--id", stdEventID},                       // a 3-byte key
		{"sig", "sign", "--secret", "a-lerian-secret-of-24-chars", "--id", stdEventID},                                       // --id without the scheme
		{"sig", "verify", "--scheme", "standard-webhooks", "--secret", whsecNew, "--timestamp", "1", "--signature", "v1,AA"}, // no id
	} {
		if res := clitest.Run(t, nil, args...); res.Code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, res.Code, res.Stderr)
		}
	}
}
