package webhook

import (
	"crypto/hmac"
	"encoding/hex"
	"errors"
	"iter"
	"math"
	"slices"
	"strings"
	"time"
)

// DefaultTolerance is how far X-Webhook-Timestamp may be from the receiver's
// clock, in either direction, when the caller passes no tolerance.
const DefaultTolerance = 5 * time.Minute

// Reason says why a delivery failed verification. The values are fixed by the
// product contract: `hubctl sig verify` prints them and scripts match on them.
type Reason string

const (
	// ReasonStaleTimestamp: the timestamp is older than the tolerance allows.
	ReasonStaleTimestamp Reason = "stale_timestamp"
	// ReasonFutureTimestamp: the timestamp is further ahead than the tolerance allows.
	ReasonFutureTimestamp Reason = "future_timestamp"
	// ReasonSignatureMismatch: well-formed signatures, none made with a known secret.
	ReasonSignatureMismatch Reason = "signature_mismatch"
	// ReasonMalformedSignature: the timestamp is not Unix seconds, or no
	// signature value has the form "v1,sha256=" + 64 hex digits.
	ReasonMalformedSignature Reason = "malformed_signature"
)

// VerifyError is the error Verify and VerifyRequest return for a request that
// fails verification. Its message never holds a secret or an expected
// signature, so it is safe to log and to send back to the caller.
type VerifyError struct {
	Reason Reason
	detail string // human explanation, built only from validated values
}

func (e *VerifyError) Error() string {
	if e.detail == "" {
		return "webhook: " + string(e.Reason)
	}
	return "webhook: " + string(e.Reason) + ": " + e.detail
}

// ErrNoSecrets is returned when Verify is given no non-empty secret. It
// reports a misconfigured receiver, not a bad request, so it is not a
// *VerifyError.
var ErrNoSecrets = errors.New("webhook: no signing secret configured")

// Verify checks a delivery. secrets are the signing secrets the receiver
// accepts (during a rotation, both); empty strings among them are ignored,
// because an empty key is public knowledge and would let anyone sign.
// timestamp is the X-Webhook-Timestamp value and signatures every
// X-Webhook-Signature line as received: lines an intermediary folded into one
// ("a, b" or "a,b") are split again. now is the receiver's clock; tolerance <= 0
// selects DefaultTolerance.
//
// The request is authentic when |now − timestamp| <= tolerance and any
// signature matches any secret. Otherwise Verify returns a *VerifyError whose
// Reason is the first that applies, in this order: a malformed timestamp
// (ReasonMalformedSignature), ReasonStaleTimestamp, ReasonFutureTimestamp, no
// well-formed signature (ReasonMalformedSignature), ReasonSignatureMismatch.
// Signatures are compared in constant time.
func Verify(secrets []string, timestamp string, signatures []string, body []byte, now time.Time, tolerance time.Duration) error {
	if !slices.ContainsFunc(secrets, isUsableSecret) {
		return ErrNoSecrets
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}

	ts, err := ParseTimestamp(timestamp)
	if err != nil {
		return &VerifyError{Reason: ReasonMalformedSignature, detail: "timestamp is not Unix seconds"}
	}
	if err := checkFreshness(ts, now, tolerance); err != nil {
		return err
	}

	// The expected MACs are computed on the first well-formed value, so a
	// request made only of garbage costs no HMAC at all, and values are
	// checked as they are split, so the work stays linear in the header size.
	var (
		wellFormed bool
		expected   []mac
	)
	for value := range signatureValues(signatures) {
		got, ok := parseSignature(value)
		if !ok {
			continue
		}
		if !wellFormed {
			wellFormed = true
			expected = expectedMACs(secrets, timestamp, body)
		}
		for i := range expected {
			if hmac.Equal(got[:], expected[i][:]) {
				return nil
			}
		}
	}
	if !wellFormed {
		return &VerifyError{
			Reason: ReasonMalformedSignature,
			detail: `no signature of the form "v1,sha256=" followed by 64 hex digits`,
		}
	}
	return &VerifyError{Reason: ReasonSignatureMismatch, detail: "no signature matches a known secret"}
}

func isUsableSecret(secret string) bool { return secret != "" }

func expectedMACs(secrets []string, timestamp string, body []byte) []mac {
	macs := make([]mac, 0, len(secrets))
	for _, secret := range secrets {
		if isUsableSecret(secret) {
			macs = append(macs, computeMAC(secret, timestamp, body))
		}
	}
	return macs
}

// checkFreshness returns the timestamp error for ts (Unix seconds) at now, or
// nil when |now − ts| <= tolerance.
func checkFreshness(ts int64, now time.Time, tolerance time.Duration) error {
	skew := distance(ts, now)
	if skew <= tolerance {
		return nil
	}
	reason, direction := ReasonFutureTimestamp, "ahead of"
	if ts <= now.Unix() { // ts has no fraction, so this means ts <= now
		reason, direction = ReasonStaleTimestamp, "behind"
	}
	return &VerifyError{
		Reason: reason,
		detail: "timestamp is " + skew.String() + " " + direction + " this clock; tolerance is " + tolerance.String(),
	}
}

// distance returns |now − ts| for ts in Unix seconds, saturating at the
// largest time.Duration (so only a tolerance of about 292 years would accept
// a saturated distance). ts comes from the request and may be any
// non-negative int64, so the difference is taken in unsigned whole seconds,
// where it cannot overflow, before it is turned into a Duration.
func distance(ts int64, now time.Time) time.Duration {
	const maxSeconds = uint64(math.MaxInt64 / int64(time.Second))
	nowSeconds := now.Unix()
	fraction := time.Duration(now.Nanosecond())
	if ts <= nowSeconds {
		seconds := uint64(nowSeconds) - uint64(ts)
		if seconds >= maxSeconds {
			return math.MaxInt64
		}
		return time.Duration(seconds)*time.Second + fraction
	}
	seconds := uint64(ts) - uint64(nowSeconds)
	if seconds >= maxSeconds {
		return math.MaxInt64
	}
	return time.Duration(seconds)*time.Second - fraction
}

// signatureValues yields the signature values carried by header lines. An
// intermediary may fold repeated lines into one, joined by "," or ", ". A
// value itself holds a comma ("v1,sha256=…"), so a line is cut only at a
// comma followed, after optional spaces or tabs, by "v1,". Hex digits cannot
// spell that, so a well-formed value is never cut in two; text that is not a
// value stays attached to the value before it and makes only that one
// unparsable. Values are trimmed of spaces and tabs; empty ones are skipped.
func signatureValues(lines []string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, line := range lines {
			for {
				cut := nextValueBoundary(line)
				value := line
				if cut >= 0 {
					value = line[:cut]
				}
				if value = strings.Trim(value, " \t"); value != "" && !yield(value) {
					return
				}
				if cut < 0 {
					break
				}
				line = line[cut+1:]
			}
		}
	}
}

// nextValueBoundary returns the index of the first comma in line that starts
// a new value, or -1. Each run of whitespace is skipped for the one comma
// before it only, so a scan is linear in len(line).
func nextValueBoundary(line string) int {
	for i := 0; i < len(line); i++ {
		if line[i] == ',' && strings.HasPrefix(strings.TrimLeft(line[i+1:], " \t"), "v1,") {
			return i
		}
	}
	return -1
}

// parseSignature decodes "v1,sha256=" followed by exactly 64 hex digits of
// either case. Comparing decoded bytes, not text, is what makes upper-case
// hex match.
func parseSignature(value string) (mac, bool) {
	var sum mac
	digits, found := strings.CutPrefix(value, signaturePrefix)
	if !found || len(digits) != hex.EncodedLen(len(sum)) {
		return sum, false
	}
	var buf [2 * len(sum)]byte // avoids the heap copy a []byte(digits) conversion makes
	copy(buf[:], digits)
	if _, err := hex.Decode(sum[:], buf[:]); err != nil {
		return sum, false
	}
	return sum, true
}
