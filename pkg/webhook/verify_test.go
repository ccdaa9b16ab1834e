package webhook

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	testSecret    = "whsec_3q2-7wEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	testOldSecret = "a-plain-secret-of-24-chars!!"
	testTimestamp = int64(1767225600)
)

var testBody = []byte(`{"id":"0190b6a2-7c1e-7d3a-9f00-123456789abc","amount":1000,"currency":"BRL"}`)

// reasonOf returns "ok" for nil and the Reason of a *VerifyError; any other
// error fails the test.
func reasonOf(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return "ok"
	}
	verr, ok := errors.AsType[*VerifyError](err)
	if !ok {
		t.Fatalf("error %v is not a *VerifyError", err)
	}
	return string(verr.Reason)
}

func TestVerifyPrecedence(t *testing.T) {
	valid := Sign(testSecret, testTimestamp, testBody)
	wrong := Sign(testOldSecret, testTimestamp, testBody)
	now := time.Unix(testTimestamp, 0)
	tests := []struct {
		name       string
		timestamp  string
		now        time.Time
		signatures []string
		want       string
	}{
		{"malformed timestamp beats a valid signature", "1767225600.5", now, []string{valid}, "malformed_signature"},
		{"malformed timestamp beats a stale clock", "-1767225600", now.Add(time.Hour), []string{valid}, "malformed_signature"},
		{"stale beats malformed signature", "1767225600", now.Add(time.Hour), []string{"garbage"}, "stale_timestamp"},
		{"future beats malformed signature", "1767225600", now.Add(-time.Hour), []string{""}, "future_timestamp"},
		{"stale beats mismatch", "1767225600", now.Add(time.Hour), []string{wrong}, "stale_timestamp"},
		{"missing signature header", "1767225600", now, nil, "malformed_signature"},
		{"one well-formed value turns malformed into mismatch", "1767225600", now, []string{"garbage", wrong}, "signature_mismatch"},
		{"garbage next to a valid value is ignored", "1767225600", now, []string{"garbage", valid}, "ok"},
		{"valid value in a later header line", "1767225600", now, []string{wrong, "v0,sha256=00", valid}, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify([]string{testSecret}, tt.timestamp, tt.signatures, testBody, tt.now, DefaultTolerance)
			if got := reasonOf(t, err); got != tt.want {
				t.Fatalf("got %s (%v), want %s", got, err, tt.want)
			}
		})
	}
}

func TestVerifyClockSkewBoundaries(t *testing.T) {
	valid := Sign(testSecret, testTimestamp, testBody)
	signedAt := time.Unix(testTimestamp, 0)
	tests := []struct {
		name      string
		now       time.Time
		tolerance time.Duration
		want      string
	}{
		{"receiver exactly tolerance behind", signedAt.Add(-DefaultTolerance), DefaultTolerance, "ok"},
		{"receiver exactly tolerance ahead", signedAt.Add(DefaultTolerance), DefaultTolerance, "ok"},
		{"receiver 1ns past tolerance ahead", signedAt.Add(DefaultTolerance + time.Nanosecond), DefaultTolerance, "stale_timestamp"},
		{"receiver 1ns past tolerance behind", signedAt.Add(-DefaultTolerance - time.Nanosecond), DefaultTolerance, "future_timestamp"},
		{"sub-second tolerance, same second", signedAt.Add(400 * time.Millisecond), 500 * time.Millisecond, "ok"},
		{"sub-second tolerance exceeded within the same second", signedAt.Add(600 * time.Millisecond), 500 * time.Millisecond, "stale_timestamp"},
		{"custom tolerance honoured", signedAt.Add(11 * time.Second), 10 * time.Second, "stale_timestamp"},
		{"zero tolerance selects the default", signedAt.Add(DefaultTolerance), 0, "ok"},
		{"negative tolerance selects the default", signedAt.Add(-DefaultTolerance - time.Second), -time.Second, "future_timestamp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify([]string{testSecret}, "1767225600", []string{valid}, testBody, tt.now, tt.tolerance)
			if got := reasonOf(t, err); got != tt.want {
				t.Fatalf("got %s (%v), want %s", got, err, tt.want)
			}
		})
	}
}

func TestVerifyExtremeTimestamps(t *testing.T) {
	now := time.Unix(testTimestamp, 0)
	tests := []struct {
		timestamp string
		want      string
	}{
		{"0", "stale_timestamp"},
		{"9223372036854775807", "future_timestamp"}, // math.MaxInt64: must not wrap into the past
		{"9223372036854775808", "malformed_signature"},
		{"00001767225600", "signature_mismatch"}, // fresh, but the signed text was "1767225600"
	}
	for _, tt := range tests {
		t.Run(tt.timestamp, func(t *testing.T) {
			err := Verify([]string{testSecret}, tt.timestamp, []string{Sign(testSecret, testTimestamp, testBody)}, testBody, now, DefaultTolerance)
			if got := reasonOf(t, err); got != tt.want {
				t.Fatalf("got %s (%v), want %s", got, err, tt.want)
			}
		})
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		name string
		ts   int64
		now  time.Time
		want time.Duration
	}{
		{"same instant", 100, time.Unix(100, 0), 0},
		{"now later by a fraction", 100, time.Unix(100, 250), 250},
		{"timestamp later than a fractional now", 101, time.Unix(100, 250), time.Second - 250},
		{"far past", 0, time.Unix(1<<32, 0), time.Duration(1<<32) * time.Second},
		{"saturates ahead", math.MaxInt64, time.Unix(0, 0), math.MaxInt64},
		{"saturates behind", 0, time.Unix(math.MaxInt64/int64(time.Second)+1, 0), math.MaxInt64},
		{"pre-1970 clock", math.MaxInt64, time.Unix(-1<<40, 0), math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := distance(tt.ts, tt.now); got != tt.want {
				t.Fatalf("distance(%d, %v) = %v, want %v", tt.ts, tt.now, got, tt.want)
			}
		})
	}
}

// A comparison that stopped early or looked at a prefix would accept a value
// differing in a later byte; flipping one bit at every position proves all 32
// bytes reach the constant-time compare.
func TestVerifyComparesEveryByte(t *testing.T) {
	sum := computeMAC(testSecret, "1767225600", testBody)
	now := time.Unix(testTimestamp, 0)
	for i := range sum {
		flipped := sum
		flipped[i] ^= 0x01
		err := Verify([]string{testSecret}, "1767225600", []string{formatSignature(flipped)}, testBody, now, DefaultTolerance)
		if got := reasonOf(t, err); got != "signature_mismatch" {
			t.Fatalf("byte %d flipped: got %s, want signature_mismatch", i, got)
		}
	}
}

func TestParseSignature(t *testing.T) {
	lower := Sign(testSecret, testTimestamp, testBody)
	digits := strings.TrimPrefix(lower, signaturePrefix)
	tests := []struct {
		name  string
		value string
		ok    bool
	}{
		{"lower-case hex", lower, true},
		{"upper-case hex", signaturePrefix + strings.ToUpper(digits), true},
		{"mixed-case hex", signaturePrefix + strings.ToUpper(digits[:32]) + digits[32:], true},
		{"63 digits", signaturePrefix + digits[:63], false},
		{"65 digits", lower + "0", false},
		{"non-hex digit", signaturePrefix + "g" + digits[1:], false},
		{"upper-case scheme", "V1,SHA256=" + digits, false},
		{"other digest", "v1,sha512=" + digits, false},
		{"no scheme", "sha256=" + digits, false},
		{"empty", "", false},
		{"space inside", signaturePrefix + digits[:32] + " " + digits[33:], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseSignature(tt.value)
			if ok != tt.ok {
				t.Fatalf("parseSignature(%q) ok = %v, want %v", tt.value, ok, tt.ok)
			}
			if ok && got != computeMAC(testSecret, "1767225600", testBody) {
				t.Fatalf("parseSignature(%q) decoded the wrong bytes", tt.value)
			}
		})
	}
}

func TestSignatureValues(t *testing.T) {
	a := Sign(testSecret, testTimestamp, testBody)
	b := Sign(testOldSecret, testTimestamp, testBody)
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"one value", []string{a}, []string{a}},
		{"separate lines", []string{a, b}, []string{a, b}},
		{"joined with comma-space", []string{a + ", " + b}, []string{a, b}},
		{"joined with comma", []string{a + "," + b}, []string{a, b}},
		{"joined with comma-tab and padding", []string{" " + a + " ,\t " + b + " "}, []string{a, b}},
		{"joined and a separate line", []string{a + ", " + b, a}, []string{a, b, a}},
		{"the comma inside a value is never a cut", []string{"v1,sha256=v1,sha256=00"}, []string{"v1,sha256=v1,sha256=00"}},
		{"comma before v1, starts a value", []string{"v1,v1,x"}, []string{"v1", "v1,x"}},
		{"non-value text sticks to the value before it", []string{a + ", sha256=00, " + b}, []string{a + ", sha256=00", b}},
		{"non-value text before a value", []string{"junk, " + a}, []string{"junk", a}},
		{"v1 without its comma does not cut", []string{a + ",v1sha256=00"}, []string{a + ",v1sha256=00"}},
		{"empty line", []string{""}, nil},
		{"only separators", []string{" , ,\t"}, []string{", ,"}},
		{"empty pieces between cuts are dropped", []string{",v1,x"}, []string{"v1,x"}},
		{"no lines", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Collect(signatureValues(tt.lines))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("signatureValues(%q)\n got %q\nwant %q", tt.lines, got, tt.want)
			}
		})
	}
}

func TestSignatureValuesStopsWhenAsked(t *testing.T) {
	a := Sign(testSecret, testTimestamp, testBody)
	var seen []string
	for v := range signatureValues([]string{a + ", " + a, a}) {
		seen = append(seen, v)
		break
	}
	if len(seen) != 1 {
		t.Fatalf("iteration continued after break: %q", seen)
	}
}

func TestParseTimestamp(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1767225600", 1767225600, true},
		{"0", 0, true},
		{"0001767225600", 1767225600, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"9223372036854775808", 0, false},
		{"", 0, false},
		{"+1767225600", 0, false},
		{"-1767225600", 0, false},
		{" 1767225600", 0, false},
		{"1767225600 ", 0, false},
		{"1767225600.0", 0, false},
		{"17672256OO", 0, false},
		{"1e9", 0, false},
		{"١٢٣", 0, false}, // Arabic-Indic digits are digits to Unicode, not to the hub
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTimestamp(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("ParseTimestamp(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestVerifySecrets(t *testing.T) {
	now := time.Unix(testTimestamp, 0)
	emptyKeySignature := Sign("", testTimestamp, testBody)
	tests := []struct {
		name      string
		secrets   []string
		signature string
		want      error
	}{
		{"no secrets", nil, Sign(testSecret, testTimestamp, testBody), ErrNoSecrets},
		{"only empty secrets", []string{"", ""}, emptyKeySignature, ErrNoSecrets},
		{"an unset previous secret is skipped", []string{testSecret, ""}, Sign(testSecret, testTimestamp, testBody), nil},
		{"an empty key never verifies", []string{testSecret, ""}, emptyKeySignature, &VerifyError{Reason: ReasonSignatureMismatch}},
		{"second secret matches", []string{testOldSecret, testSecret}, Sign(testSecret, testTimestamp, testBody), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.secrets, "1767225600", []string{tt.signature}, testBody, now, DefaultTolerance)
			switch want := tt.want.(type) {
			case nil:
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
			case *VerifyError:
				if got := reasonOf(t, err); got != string(want.Reason) {
					t.Fatalf("got %s (%v), want %s", got, err, want.Reason)
				}
			default:
				if !errors.Is(err, want) {
					t.Fatalf("got %v, want %v", err, want)
				}
			}
		})
	}
}

func TestVerifyErrorMessage(t *testing.T) {
	valid := Sign(testSecret, testTimestamp, testBody)
	signedAt := time.Unix(testTimestamp, 0)
	tests := []struct {
		name      string
		timestamp string
		signature string
		now       time.Time
		want      string
	}{
		{"stale", "1767225600", valid, signedAt.Add(7*time.Minute + 500*time.Millisecond),
			"webhook: stale_timestamp: timestamp is 7m0.5s behind this clock; tolerance is 5m0s"},
		{"future", "1767225600", valid, signedAt.Add(-7 * time.Minute),
			"webhook: future_timestamp: timestamp is 7m0s ahead of this clock; tolerance is 5m0s"},
		{"malformed timestamp", "x" + testSecret, valid, signedAt,
			"webhook: malformed_signature: timestamp is not Unix seconds"},
		{"malformed signature", "1767225600", testSecret, signedAt,
			`webhook: malformed_signature: no signature of the form "v1,sha256=" followed by 64 hex digits`},
		{"mismatch", "1767225600", Sign(testOldSecret, testTimestamp, testBody), signedAt,
			"webhook: signature_mismatch: no signature matches a known secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify([]string{testSecret}, tt.timestamp, []string{tt.signature}, testBody, tt.now, DefaultTolerance)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
	if got, want := (&VerifyError{Reason: ReasonStaleTimestamp}).Error(), "webhook: stale_timestamp"; got != want {
		t.Fatalf("VerifyError without detail = %q, want %q", got, want)
	}
}
