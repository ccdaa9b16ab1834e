package sig_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/conformance"
)

func bodyFile(t *testing.T, b64 string) string {
	t.Helper()
	body, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestVerifyPassesEveryConformanceVector drives `hubctl sig verify` as a
// script would, once with flags and once with a captured header block,
// over every verify case of signatures.json.
func TestVerifyPassesEveryConformanceVector(t *testing.T) {
	vectors, err := conformance.LoadSignatures()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range vectors.Verify {
		t.Run(tc.Name, func(t *testing.T) {
			body := bodyFile(t, tc.BodyBase64)
			common := []string{"sig", "verify", "--body-file", body, "--now", strconv.FormatInt(tc.Now, 10),
				"--tolerance", fmt.Sprintf("%ds", tc.ToleranceSeconds)}
			for _, s := range tc.Secrets {
				common = append(common, "--secret", s)
			}

			withFlags := append(append([]string{}, common...), "--timestamp", tc.Timestamp)
			for _, v := range tc.SignatureHeaders {
				withFlags = append(withFlags, "--signature", v)
			}
			check(t, "flags", clitest.Run(t, nil, withFlags...), tc.Expect)

			block := "POST /hook HTTP/1.1\r\nHost: receiver.test\r\nX-Webhook-Timestamp: " + tc.Timestamp + "\r\n"
			for _, v := range tc.SignatureHeaders {
				block += "X-Webhook-Signature: " + v + "\r\n"
			}
			headers := filepath.Join(t.TempDir(), "headers")
			if err := os.WriteFile(headers, []byte(block+"\r\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			check(t, "headers file", clitest.Run(t, nil, append(common, "--headers-file", headers)...), tc.Expect)
		})
	}
}

func check(t *testing.T, how string, res clitest.Result, expect string) {
	t.Helper()
	if expect == "ok" {
		if res.Code != 0 || res.Stderr != "" {
			t.Errorf("%s: exit %d, stderr %q; want 0 and silence", how, res.Code, res.Stderr)
		}
		return
	}
	lines := strings.Split(strings.TrimSuffix(res.Stderr, "\n"), "\n")
	if res.Code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], expect) {
		t.Errorf("%s: exit %d, stderr %q; want 1 and one line starting with %s", how, res.Code, res.Stderr, expect)
	}
}

// TestSignMatchesEveryConformanceVector checks the printed signature line
// against every sign case, the body on standard input.
func TestSignMatchesEveryConformanceVector(t *testing.T) {
	vectors, err := conformance.LoadSignatures()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range vectors.Sign {
		body, err := base64.StdEncoding.DecodeString(tc.BodyBase64)
		if err != nil {
			t.Fatal(err)
		}
		res := clitest.RunWithStdin(t, nil, string(body), "sig", "sign", "--secret", tc.Secret, "--timestamp", tc.Timestamp)
		want := "X-Webhook-Timestamp: " + tc.Timestamp + "\nX-Webhook-Signature: " + tc.ExpectedSignature + "\n"
		if res.Code != 0 || res.Stdout != want {
			t.Errorf("%s: exit %d\n%s%s\nwant\n%s", tc.Name, res.Code, res.Stdout, res.Stderr, want)
		}
	}
}

// TestSignedOutputVerifies round-trips sign into verify through a header
// file, as a CI step would, with two secrets during a rotation.
func TestSignedOutputVerifies(t *testing.T) {
	const body = `{"amount":1000}`
	signed := clitest.RunWithStdin(t, nil, body, "sig", "sign", "--secret", "whsec_new-secret-of-enough-length", "--secret", "whsec_old-secret-of-enough-length")
	if signed.Code != 0 || strings.Count(signed.Stdout, "X-Webhook-Signature:") != 2 {
		t.Fatalf("sign: %d %q %q", signed.Code, signed.Stdout, signed.Stderr)
	}
	headers := filepath.Join(t.TempDir(), "headers")
	if err := os.WriteFile(headers, []byte(signed.Stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := clitest.RunWithStdin(t, nil, body, "sig", "verify", "--secret", "whsec_old-secret-of-enough-length", "--headers-file", headers)
	if ok.Code != 0 {
		t.Errorf("verify with the old secret: %d %q", ok.Code, ok.Stderr)
	}
	tampered := clitest.RunWithStdin(t, nil, body+" ", "sig", "verify", "--secret", "whsec_old-secret-of-enough-length", "--headers-file", headers)
	if tampered.Code != 1 || !strings.HasPrefix(tampered.Stderr, "signature_mismatch") {
		t.Errorf("verify a tampered body: %d %q", tampered.Code, tampered.Stderr)
	}
}

func TestSigUsageErrors(t *testing.T) {
	cases := [][]string{
		{"sig", "sign", "--timestamp", "1"},
		{"sig", "sign", "--secret", "", "--timestamp", "1"},
		{"sig", "sign", "--secret", "s", "--timestamp", "-1"},
		{"sig", "verify", "--timestamp", "1", "--signature", "v1,sha256=00"},
		{"sig", "verify", "--secret", "s", "--signature", "v1,sha256=00"},
		{"sig", "verify", "--secret", "s", "--timestamp", "1"},
		{"sig", "verify", "--secret", "s", "--timestamp", "1", "--signature", "x", "--tolerance", "0s"},
		{"sig", "verify", "--secret", "s", "--headers-file", "/nonexistent/headers"},
		{"sig", "verify", "--secret", "s", "--timestamp", "1", "--signature", "x", "--body-file", "/nonexistent/body"},
	}
	for _, args := range cases {
		if res := clitest.Run(t, nil, args...); res.Code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, res.Code, res.Stderr)
		}
	}
}
