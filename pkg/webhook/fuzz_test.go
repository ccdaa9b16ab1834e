package webhook

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzVerify feeds arbitrary timestamps, signature header lines (separated by
// "\n"), bodies and clocks to Verify. Seeds live in testdata/fuzz/FuzzVerify.
func FuzzVerify(f *testing.F) {
	f.Add("1767225600", Sign(testSecret, testTimestamp, testBody), testBody, testTimestamp, int64(300))

	secrets := []string{testSecret, testOldSecret}
	known := map[Reason]bool{
		ReasonStaleTimestamp:     true,
		ReasonFutureTimestamp:    true,
		ReasonSignatureMismatch:  true,
		ReasonMalformedSignature: true,
	}
	f.Fuzz(func(t *testing.T, timestamp, signatureLines string, body []byte, nowUnix, toleranceSeconds int64) {
		lines := strings.Split(signatureLines, "\n")
		now := time.Unix(nowUnix, 0)
		tolerance := time.Duration(toleranceSeconds) * time.Second // may overflow: any Duration is valid input

		err := Verify(secrets, timestamp, lines, body, now, tolerance)
		if err != nil {
			verr, ok := errors.AsType[*VerifyError](err)
			if !ok || !known[verr.Reason] {
				t.Fatalf("Verify returned %v, want nil or a *VerifyError with a contract reason", err)
			}
			for _, secret := range secrets {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error %q leaks a secret", err)
				}
			}
		} else if !carriesSignatureOf(lines, secrets, timestamp, body) {
			t.Fatalf("Verify accepted %q at %q without any value made by a known secret", lines, timestamp)
		}

		// Whatever else arrives, a correct signature on its own line verifies
		// when the timestamp is well-formed and the clock agrees with it.
		ts, parseErr := ParseTimestamp(timestamp)
		if parseErr != nil || ts > 1<<40 { // beyond year 36000 time.Unix itself stops being meaningful
			return
		}
		good := formatSignature(computeMAC(testOldSecret, timestamp, body))
		if err := Verify(secrets, timestamp, append(lines, good), body, time.Unix(ts, 0), tolerance); err != nil {
			t.Fatalf("a valid signature next to %q was refused: %v", lines, err)
		}
	})
}

// carriesSignatureOf reports whether some value in lines is, ignoring hex case,
// the signature one of secrets makes: the only way Verify may say yes.
func carriesSignatureOf(lines, secrets []string, timestamp string, body []byte) bool {
	for value := range signatureValues(lines) {
		for _, secret := range secrets {
			if strings.EqualFold(value, formatSignature(computeMAC(secret, timestamp, body))) {
				return true
			}
		}
	}
	return false
}

// FuzzSplit checks the splitting rule on arbitrary header lines. Seeds live
// in testdata/fuzz/FuzzSplit.
func FuzzSplit(f *testing.F) {
	f.Add("v1,sha256=00, v1,sha256=11", uint8(1))

	a := Sign(testSecret, testTimestamp, testBody)
	b := Sign(testOldSecret, testTimestamp, testBody)
	f.Fuzz(func(t *testing.T, line string, spaces uint8) {
		values := slices.Collect(signatureValues([]string{line}))
		rest := line
		for i, v := range values {
			if v == "" || strings.Trim(v, " \t") != v {
				t.Fatalf("value %d of %q is empty or untrimmed: %q", i, line, v)
			}
			if nextValueBoundary(v) >= 0 {
				t.Fatalf("value %d of %q still holds a boundary: %q", i, line, v)
			}
			// Between values only separators (commas, spaces, tabs) may be dropped.
			at := strings.Index(rest, v)
			if at < 0 || strings.Trim(rest[:at], " \t,") != "" {
				t.Fatalf("splitting %q lost text before value %d %q", line, i, v)
			}
			// A value's own comma may be the next cut ("v1,v1,x" is "v1" and
			// "v1,x"), so the "v1," that justified a cut is read from the line.
			if i > 0 && !strings.HasPrefix(rest[at:], "v1,") {
				t.Fatalf("value %d of %q was cut somewhere other than before \"v1,\": %q", i, line, v)
			}
			rest = rest[at+len(v):]
		}
		if strings.Trim(rest, " \t,") != "" {
			t.Fatalf("splitting %q lost the trailing text %q", line, rest)
		}

		// Well-formed values survive any intermediary join, whatever text comes first.
		sep := "," + strings.Repeat(" ", int(spaces%4))
		joined := slices.Collect(signatureValues([]string{line + sep + a + sep + b}))
		if len(joined) < 2 || !slices.Equal(joined[len(joined)-2:], []string{a, b}) {
			t.Fatalf("joining %q before two signatures with %q gave %q", line, sep, joined)
		}
	})
}
