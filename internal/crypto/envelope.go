package crypto

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

const (
	envelopeVersion = "v1"
	nonceSize       = 12
	tagSize         = 16
)

// payloadEncoding is the envelope's third part. Strict rejects non-canonical
// trailing bits, so each ciphertext has exactly one textual form.
var payloadEncoding = base64.RawURLEncoding.Strict()

var (
	// ErrMalformed means the value is not a well-formed v1 envelope. Its
	// messages never quote the value, which may be a plaintext secret stored
	// by mistake.
	ErrMalformed = errors.New("crypto: malformed envelope")
	// ErrAuthentication means the envelope was altered, was made under a
	// different key with the same id, or belongs to another row or field.
	ErrAuthentication = errors.New("crypto: envelope failed authentication (tampered, wrong key, or wrong row id or field)")
	// ErrUnknownKey means the envelope names a key id the keyring lacks; the
	// error is an *UnknownKeyError carrying that id.
	ErrUnknownKey = errors.New("crypto: unknown key id")
	// ErrNoAssociatedData means a row id or field name was empty. Binding to
	// an empty value would let the ciphertext move between rows unnoticed.
	ErrNoAssociatedData = errors.New("crypto: row id and field name must both be non-empty")

	errEmptyKeyring = errors.New("crypto: keyring has no keys; build it with ParseKeyring")
)

// UnknownKeyError reports the key id of an envelope the keyring cannot
// decrypt; key ids are labels, not secrets. It matches [ErrUnknownKey] under
// errors.Is.
type UnknownKeyError struct {
	KeyID string
}

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("crypto: envelope key id %q is not in the keyring (was a key removed before its envelopes were re-encrypted?)", e.KeyID)
}

// Is makes errors.Is(err, ErrUnknownKey) hold.
func (e *UnknownKeyError) Is(target error) bool { return target == ErrUnknownKey }

// Encrypt seals plaintext under the active key, bound to the row id and field
// name it will be stored in, and returns a v1 envelope (see the package
// documentation). Every call draws a fresh random nonce.
func (k *Keyring) Encrypt(plaintext []byte, rowID, field string) (string, error) {
	if k == nil || len(k.aeads) == 0 {
		return "", errEmptyKeyring
	}
	if rowID == "" || field == "" {
		return "", ErrNoAssociatedData
	}
	sealed := k.aeads[k.activeID].Seal(nil, nil, plaintext, associatedData(rowID, field))
	return envelopeVersion + ":" + k.activeID + ":" + payloadEncoding.EncodeToString(sealed), nil
}

// Decrypt opens an envelope made by [Keyring.Encrypt] for the same row id and
// field, under whichever keyring key its key id names. Errors match
// [ErrMalformed], [ErrUnknownKey], [ErrAuthentication] or
// [ErrNoAssociatedData].
func (k *Keyring) Decrypt(envelope, rowID, field string) ([]byte, error) {
	if k == nil || len(k.aeads) == 0 {
		return nil, errEmptyKeyring
	}
	if rowID == "" || field == "" {
		return nil, ErrNoAssociatedData
	}
	keyID, sealed, err := parseEnvelope(envelope)
	if err != nil {
		return nil, err
	}
	aead, ok := k.aeads[keyID]
	if !ok {
		return nil, &UnknownKeyError{KeyID: keyID}
	}
	plaintext, err := aead.Open(nil, nil, sealed, associatedData(rowID, field))
	if err != nil {
		return nil, ErrAuthentication
	}
	return plaintext, nil
}

// NeedsReencrypt reports whether a well-formed envelope names a key other
// than the active one, i.e. whether a re-encryption job should rewrite it. It
// is false for malformed values, which no re-encryption can fix; Decrypt says
// what is wrong with them. It does not authenticate the envelope.
func (k *Keyring) NeedsReencrypt(envelope string) bool {
	if k == nil || len(k.aeads) == 0 {
		return false
	}
	keyID, _, err := parseEnvelope(envelope)
	return err == nil && keyID != k.activeID
}

// parseEnvelope splits "v1:<key id>:<payload>" and decodes the payload. It
// checks the shape only; authenticity is Open's job.
func parseEnvelope(envelope string) (keyID string, sealed []byte, err error) {
	version, rest, ok := strings.Cut(envelope, ":")
	if !ok {
		return "", nil, fmt.Errorf("%w: not a versioned envelope", ErrMalformed)
	}
	if version != envelopeVersion {
		return "", nil, fmt.Errorf("%w: unsupported version (want %s)", ErrMalformed, envelopeVersion)
	}
	keyID, payload, ok := strings.Cut(rest, ":")
	if !ok {
		return "", nil, fmt.Errorf("%w: missing payload", ErrMalformed)
	}
	if !validKeyID(keyID) {
		return "", nil, fmt.Errorf("%w: invalid key id", ErrMalformed)
	}
	// The decoder silently skips CR and LF; refusing them keeps one textual
	// form per ciphertext.
	if strings.ContainsAny(payload, "\r\n") {
		return "", nil, fmt.Errorf("%w: payload contains line breaks", ErrMalformed)
	}
	sealed, err = payloadEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, fmt.Errorf("%w: payload is not unpadded base64url", ErrMalformed)
	}
	if len(sealed) < nonceSize+tagSize {
		return "", nil, fmt.Errorf("%w: payload shorter than nonce and tag", ErrMalformed)
	}
	return keyID, sealed, nil
}

// associatedData encodes the row id and field name with length prefixes so
// that no two distinct pairs share an encoding: ("ab", "c") and ("a", "bc")
// differ, as do pairs whose parts contain any separator byte one might pick.
func associatedData(rowID, field string) []byte {
	ad := make([]byte, 0, 16+len(rowID)+len(field))
	ad = binary.BigEndian.AppendUint64(ad, uint64(len(rowID)))
	ad = append(ad, rowID...)
	ad = binary.BigEndian.AppendUint64(ad, uint64(len(field)))
	ad = append(ad, field...)
	return ad
}
