package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Signature schemes a subscription can sign with. SchemeLerian is the hub's
// own (X-Webhook-Signature); SchemeStandardWebhooks is the one of
// standardwebhooks.com, which receivers verify with its official libraries.
const (
	SchemeLerian           = "lerian"
	SchemeStandardWebhooks = "standard-webhooks"
)

// Headers of the Standard Webhooks scheme, in canonical MIME form. The
// X-Lerian-* headers are sent beside them.
const (
	HeaderWebhookID        = "Webhook-Id"        // the event id, stable across attempts
	HeaderWebhookTimestamp = "Webhook-Timestamp" // Unix seconds of this attempt
	HeaderWebhookSignature = "Webhook-Signature" // "v1,<base64>", space-separated per secret
)

// StandardSecretPrefix starts a Standard Webhooks secret; the rest is the
// standard base64 of the HMAC key.
const StandardSecretPrefix = "whsec_"

// Bounds of a Standard Webhooks key, in decoded bytes: below 24 a key is
// too weak, above 64 (the SHA-256 block size) HMAC would hash it first.
const (
	MinStandardKeyBytes = 24
	MaxStandardKeyBytes = 64
)

const standardVersion = "v1,"

// ErrStandardSecret is returned for a secret that is not "whsec_" followed
// by the standard base64 of 24 to 64 bytes.
var ErrStandardSecret = errors.New(`webhook: a standard-webhooks secret is "whsec_" followed by the standard base64 of 24 to 64 bytes`)

// DecodeStandardSecret returns the HMAC key of a Standard Webhooks secret.
// It decodes exactly what the official libraries decode, so a secret it
// accepts signs the same way on both sides.
func DecodeStandardSecret(secret string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(secret, StandardSecretPrefix)
	// encoding/base64 skips CR and LF, which other decoders refuse: the
	// same secret must mean the same key to the hub and its subscribers.
	if !ok || strings.ContainsAny(encoded, "\r\n") {
		return nil, ErrStandardSecret
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(key) < MinStandardKeyBytes || len(key) > MaxStandardKeyBytes {
		return nil, ErrStandardSecret
	}
	return key, nil
}

// SignStandard returns the webhook-signature value of body sent as message
// id at timestamp (Unix seconds): one "v1,<base64>" per secret, in the
// order of secrets, separated by spaces.
func SignStandard(secrets []string, id string, timestamp int64, body []byte) (string, error) {
	ts := strconv.FormatInt(timestamp, 10)
	values := make([]string, 0, len(secrets))
	for _, secret := range secrets {
		key, err := DecodeStandardSecret(secret)
		if err != nil {
			return "", err
		}
		sum := standardMAC(key, id, ts, body)
		values = append(values, standardVersion+base64.StdEncoding.EncodeToString(sum[:]))
	}
	return strings.Join(values, " "), nil
}

// SignStandardHeader sets the three Standard Webhooks headers of h, signed
// with every secret, so the signed and the sent timestamp are one value.
func SignStandardHeader(h http.Header, secrets []string, id string, timestamp int64, body []byte) error {
	signature, err := SignStandard(secrets, id, timestamp, body)
	if err != nil {
		return err
	}
	h.Set(HeaderWebhookID, id)
	h.Set(HeaderWebhookTimestamp, strconv.FormatInt(timestamp, 10))
	h.Set(HeaderWebhookSignature, signature)
	return nil
}

// VerifyStandard checks a Standard Webhooks delivery: id, timestamp and
// signature are the header values as received (several signature lines
// are read as one space-separated list). It fails with the same Reasons, in
// the same order, as Verify; a secret that is not a Standard Webhooks
// secret is a misconfigured receiver, reported as ErrStandardSecret.
func VerifyStandard(secrets []string, id, timestamp string, signatures []string, body []byte, now time.Time, tolerance time.Duration) error {
	var keys [][]byte
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		key, err := DecodeStandardSecret(secret)
		if err != nil {
			return err
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
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
	if id == "" {
		return &VerifyError{Reason: ReasonMalformedSignature, detail: "no message id"}
	}
	var wellFormed bool
	for _, line := range signatures {
		for _, value := range strings.Fields(line) {
			encoded, ok := strings.CutPrefix(value, standardVersion)
			if !ok {
				continue
			}
			got, err := base64.StdEncoding.DecodeString(encoded)
			if err != nil || len(got) != sha256.Size {
				continue
			}
			wellFormed = true
			for _, key := range keys {
				want := standardMAC(key, id, timestamp, body)
				if hmac.Equal(got, want[:]) {
					return nil
				}
			}
		}
	}
	if !wellFormed {
		return &VerifyError{Reason: ReasonMalformedSignature, detail: `no signature of the form "v1," followed by a base64 HMAC-SHA256`}
	}
	return &VerifyError{Reason: ReasonSignatureMismatch, detail: "no signature matches a known secret"}
}

// VerifyStandardRequest verifies a Standard Webhooks delivery whose body has
// already been read, as VerifyStandard does.
func VerifyStandardRequest(r *http.Request, body []byte, secrets []string, now time.Time, tolerance time.Duration) error {
	var timestamp string
	if lines := r.Header.Values(HeaderWebhookTimestamp); len(lines) == 1 {
		timestamp = lines[0]
	}
	return VerifyStandard(secrets, r.Header.Get(HeaderWebhookID), timestamp, r.Header.Values(HeaderWebhookSignature), body, now, tolerance)
}

// standardMAC signs "id.timestamp.body" as the Standard Webhooks spec says.
func standardMAC(key []byte, id, timestamp string, body []byte) mac {
	h := hmac.New(sha256.New, key)
	_, _ = io.WriteString(h, id)
	_, _ = io.WriteString(h, ".")
	_, _ = io.WriteString(h, timestamp)
	_, _ = io.WriteString(h, ".")
	_, _ = h.Write(body)
	var sum mac
	h.Sum(sum[:0])
	return sum
}
