package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Headers of a webhook delivery (docs/consuming.md, What a delivery looks like). The names are part of the product
// contract and are spelled in canonical MIME form, as net/http stores them.
const (
	HeaderTimestamp     = "X-Webhook-Timestamp"     // Unix seconds of this attempt
	HeaderSignature     = "X-Webhook-Signature"     // "v1,sha256=<hex>", one line per active secret
	HeaderEventID       = "X-Lerian-Event-Id"       // CloudEvents id, stable across attempts
	HeaderEventType     = "X-Lerian-Event-Type"     // event key, e.g. "transaction.posted"
	HeaderTenantID      = "X-Lerian-Tenant-Id"      // owning tenant
	HeaderDeliveryID    = "X-Lerian-Delivery-Id"    // UUIDv7, new for every attempt
	HeaderSchemaVersion = "X-Lerian-Schema-Version" // the event's schemaversion
)

// VerificationEventType is the X-Lerian-Event-Type of the probe the hub sends
// when a subscription is created or re-verified (docs/concepts.md, Verification). A receiver answers
// it with any 2xx once the signature verifies.
const VerificationEventType = "hub.verification"

// signaturePrefix names the scheme and digest; only this scheme exists.
const signaturePrefix = "v1,sha256="

// mac is one HMAC-SHA256 value. A fixed-size array keeps signing and
// verifying free of per-value heap allocations.
type mac = [sha256.Size]byte

var errMalformedTimestamp = errors.New("webhook: timestamp must be Unix seconds written as decimal digits")

// Sign returns the X-Webhook-Signature value of body sent at timestamp (Unix
// seconds, non-negative: Verify rejects a negative one as malformed). The HMAC
// key is the bytes of secret as given; a "whsec_" prefix is part of the key.
func Sign(secret string, timestamp int64, body []byte) string {
	return formatSignature(computeMAC(secret, strconv.FormatInt(timestamp, 10), body))
}

// SignAll returns one signature per secret, in the order of secrets. During a
// rotation overlap the hub passes the newest secret first (docs/concepts.md, Secret rotation).
func SignAll(secrets []string, timestamp int64, body []byte) []string {
	ts := strconv.FormatInt(timestamp, 10)
	signatures := make([]string, len(secrets))
	for i, secret := range secrets {
		signatures[i] = formatSignature(computeMAC(secret, ts, body))
	}
	return signatures
}

// SignHeader sets X-Webhook-Timestamp and replaces every X-Webhook-Signature
// line of h with one line per secret, in the order of secrets. Doing both in
// one call keeps the signed timestamp and the sent timestamp the same value.
func SignHeader(h http.Header, secrets []string, timestamp int64, body []byte) {
	h.Set(HeaderTimestamp, strconv.FormatInt(timestamp, 10))
	h.Del(HeaderSignature)
	for _, signature := range SignAll(secrets, timestamp, body) {
		h.Add(HeaderSignature, signature)
	}
}

// ParseTimestamp parses an X-Webhook-Timestamp value: Unix seconds as one or
// more ASCII decimal digits, with no sign, space or fraction.
func ParseTimestamp(s string) (int64, error) {
	// strconv alone would also take "+5" and "-5"; the hub never sends a sign,
	// so a value carrying one did not come from it.
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, errMalformedTimestamp
	}
	ts, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errMalformedTimestamp
	}
	return ts, nil
}

// computeMAC authenticates the timestamp exactly as it travels in the header,
// so a receiver never has to reformat what it received to check it.
func computeMAC(secret, timestamp string, body []byte) mac {
	h := hmac.New(sha256.New, []byte(secret))
	// Writes to a hash.Hash never return an error.
	_, _ = io.WriteString(h, "v1:")
	_, _ = io.WriteString(h, timestamp)
	_, _ = io.WriteString(h, ".")
	_, _ = h.Write(body)
	var sum mac
	h.Sum(sum[:0])
	return sum
}

func formatSignature(sum mac) string {
	var buf [len(signaturePrefix) + 2*sha256.Size]byte
	n := copy(buf[:], signaturePrefix)
	hex.Encode(buf[n:], sum[:])
	return string(buf[:])
}
