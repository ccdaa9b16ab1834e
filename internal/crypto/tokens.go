package crypto

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
)

const (
	// SigningSecretPrefix starts every hub-generated webhook signing secret
	// (docs/concepts.md, Secret rotation), so a leaked one is recognisable to secret scanners.
	SigningSecretPrefix = "whsec_"
	// APITokenPrefix starts every tenant API key for the same reason.
	APITokenPrefix = "hub_"

	// randomTokenBytes gives secrets and tokens 256 bits of entropy.
	randomTokenBytes = 32
)

// RandomSecret returns a new webhook signing secret: "whsec_" followed by 32
// random bytes as unpadded base64url.
func RandomSecret() (string, error) {
	return randomToken(SigningSecretPrefix)
}

// RandomStandardSecret returns a new signing secret of a standard-webhooks
// subscription: "whsec_" followed by 32 random bytes as padded standard
// base64, which is what the official Standard Webhooks libraries decode.
func RandomStandardSecret() (string, error) {
	random, err := randomBytes()
	if err != nil {
		return "", err
	}
	return SigningSecretPrefix + base64.StdEncoding.EncodeToString(random), nil
}

// NewAPIToken returns a new tenant API key, shown to the caller once, and the
// hash to store in its place.
func NewAPIToken() (token string, hash []byte, err error) {
	token, err = randomToken(APITokenPrefix)
	if err != nil {
		return "", nil, err
	}
	return token, HashAPIToken(token), nil
}

// HashAPIToken returns the SHA-256 of a tenant API key, the value stored and
// looked up on each request. A fast unsalted hash is the right tool here:
// slow, salted password hashes exist to resist guessing low-entropy input,
// while these tokens carry 256 random bits that no hash speed makes
// guessable. Being deterministic, the hash can be indexed, so authentication
// is one lookup rather than a scan.
func HashAPIToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// ConstantTimeEqual reports whether a and b are equal in time independent of
// their contents and lengths: both are hashed to fixed-size digests first,
// and the digests compared in constant time. Two empty strings are equal, so
// callers must reject an unset expected token before comparing.
func ConstantTimeEqual(a, b string) bool {
	digestA := sha256.Sum256([]byte(a))
	digestB := sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(digestA[:], digestB[:]) == 1
}

func randomToken(prefix string) (string, error) {
	random, err := randomBytes()
	if err != nil {
		return "", err
	}
	return prefix + base64.RawURLEncoding.EncodeToString(random), nil
}

func randomBytes() ([]byte, error) {
	random := make([]byte, randomTokenBytes)
	// crypto/rand.Read documents that it never fails on supported platforms;
	// the error is still honoured in case that ever changes.
	if _, err := rand.Read(random); err != nil {
		return nil, fmt.Errorf("crypto: reading random bytes: %w", err)
	}
	return random, nil
}
