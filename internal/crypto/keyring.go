package crypto

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// keySize is the length of a KEK and of the AES-256 data key derived from it.
const keySize = 32

// maxKeyIDLen keeps key ids short enough to be obviously labels, never key
// material: an encoded 32-byte key is at least 43 characters.
const maxKeyIDLen = 32

// dataKeyInfo is the HKDF context. Changing it changes every data key, so it
// is versioned together with the envelope format.
const dataKeyInfo = "hubctl secrets-at-rest v1 aes-256-gcm data key"

// generateHint tells the operator how to produce a valid key; it ends every
// error about key material.
const generateHint = "generate one with: openssl rand -base64 32"

// ErrInvalidKeyring is wrapped by every error [ParseKeyring] returns.
var ErrInvalidKeyring = errors.New("crypto: invalid KEK")

// Keyring holds the data keys derived from the configured KEKs: one active key
// that encrypts, and older keys kept only to decrypt what they encrypted until
// it is re-encrypted. It keeps no KEK material after parsing.
//
// A Keyring is immutable once built, so it is safe for concurrent use.
type Keyring struct {
	activeID string
	ids      []string // configuration order, active first
	// aeads is filled once by ParseKeyring and only read afterwards. The
	// stdlib AES-GCM AEAD holds no per-call state, which is what makes
	// sharing one instance across goroutines safe (golang/go#41689 asks for
	// this to be documented; TestConcurrentUse checks it under -race).
	aeads map[string]cipher.AEAD
}

// keyEntry is one parsed element of the KEK value.
type keyEntry struct {
	id       string
	material []byte
}

// ParseKeyring builds a Keyring from the KEK environment value, which is one
// of:
//
//   - a single key: 32 bytes as base64 (standard or URL alphabet, padded or
//     not) or as 64 hex characters. Its id is "k" followed by the first 8 hex
//     characters of SHA-256 of the key bytes, stable across restarts and
//     encodings;
//   - a comma-separated list of id:key entries. The first is the active key;
//     the others only decrypt. Ids match [A-Za-z0-9_-]{1,32} and are unique.
//
// To rotate away from a single unnamed key, name it with the id it was given
// (see [Keyring.ActiveKeyID]) after the new one: "new:<key>,k1a2b3c4d:<old>".
//
// Errors are one line and never contain key material.
func ParseKeyring(s string) (*Keyring, error) {
	entries, err := parseKeyEntries(s)
	if err != nil {
		return nil, err
	}
	kr := &Keyring{
		activeID: entries[0].id,
		ids:      make([]string, 0, len(entries)),
		aeads:    make(map[string]cipher.AEAD, len(entries)),
	}
	for _, e := range entries {
		aead, err := newDataKeyAEAD(e.material)
		if err != nil {
			return nil, err
		}
		kr.ids = append(kr.ids, e.id)
		kr.aeads[e.id] = aead
	}
	return kr, nil
}

// parseKeyEntries turns the KEK value into validated entries, active first.
func parseKeyEntries(s string) ([]keyEntry, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, invalidKeyring("the value is empty; %s", generateHint)
	}
	// Neither base64 nor hex uses ':' or ',', so their absence means one
	// unnamed key.
	if !strings.ContainsAny(s, ":,") {
		material, err := decodeKeyMaterial(s)
		if err != nil {
			return nil, invalidKeyring("key %v; %s", err, generateHint)
		}
		return []keyEntry{{id: defaultKeyID(material), material: material}}, nil
	}

	rawEntries := strings.Split(s, ",")
	entries := make([]keyEntry, 0, len(rawEntries))
	seen := make(map[string]bool, len(rawEntries))
	for i, raw := range rawEntries {
		position := i + 1
		raw = strings.TrimSpace(raw)
		if raw == "" {
			return nil, invalidKeyring("entry %d is empty (stray comma?)", position)
		}
		id, encoded, ok := strings.Cut(raw, ":")
		if !ok {
			return nil, invalidKeyring("entry %d is not id:key; every entry of a key list needs an id", position)
		}
		id = strings.TrimSpace(id)
		// An invalid id is not echoed: it may be key material pasted into
		// the wrong place.
		if !validKeyID(id) {
			return nil, invalidKeyring("entry %d: key id must be 1-%d characters of A-Z a-z 0-9 _ -", position, maxKeyIDLen)
		}
		if seen[id] {
			return nil, invalidKeyring("entry %d: duplicate key id %q", position, id)
		}
		seen[id] = true
		material, err := decodeKeyMaterial(strings.TrimSpace(encoded))
		if err != nil {
			return nil, invalidKeyring("entry %d (id %q): key %v; %s", position, id, err, generateHint)
		}
		entries = append(entries, keyEntry{id: id, material: material})
	}
	return entries, nil
}

// decodeKeyMaterial accepts 64 hex characters or any base64 flavour, and
// requires exactly 32 bytes. Its errors describe the encoding and length only.
func decodeKeyMaterial(encoded string) ([]byte, error) {
	if encoded == "" {
		return nil, errors.New("is empty")
	}
	// 64 hex characters also parse as base64 (to 48 bytes), so hex is tried
	// first; no valid base64 key is 64 characters long, so nothing is lost.
	if len(encoded) == 2*keySize {
		if material, err := hex.DecodeString(encoded); err == nil {
			return material, nil
		}
	}
	for _, enc := range []*base64.Encoding{
		base64.StdEncoding, base64.RawStdEncoding,
		base64.URLEncoding, base64.RawURLEncoding,
	} {
		material, err := enc.DecodeString(encoded)
		if err != nil {
			continue
		}
		if len(material) != keySize {
			return nil, fmt.Errorf("decodes to %d bytes, need %d", len(material), keySize)
		}
		return material, nil
	}
	return nil, fmt.Errorf("is neither base64 nor %d hex characters", 2*keySize)
}

// defaultKeyID names an unnamed key after its fingerprint. 32 bits of a hash
// of a 256-bit random key reveal nothing usable about it.
func defaultKeyID(material []byte) string {
	sum := sha256.Sum256(material)
	return "k" + hex.EncodeToString(sum[:4])
}

// validKeyID reports whether id matches [A-Za-z0-9_-]{1,32}.
func validKeyID(id string) bool {
	if id == "" || len(id) > maxKeyIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// newDataKeyAEAD derives the data key for one KEK and prepares AES-256-GCM
// with random nonces, which Seal prepends and Open strips.
func newDataKeyAEAD(kek []byte) (cipher.AEAD, error) {
	// No salt: the KEK is already uniformly random, which is the case RFC
	// 5869 §3.1 allows an empty salt for. The info label does the domain
	// separation.
	dataKey, err := hkdf.Key(sha256.New, kek, nil, dataKeyInfo, keySize)
	if err != nil {
		return nil, fmt.Errorf("crypto: deriving data key: %w", err)
	}
	block, err := aes.NewCipher(dataKey)
	if err != nil {
		return nil, fmt.Errorf("crypto: preparing AES: %w", err)
	}
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return nil, fmt.Errorf("crypto: preparing AES-GCM: %w", err)
	}
	return aead, nil
}

func invalidKeyring(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidKeyring}, args...)...)
}

// ActiveKeyID returns the id of the key new envelopes are encrypted under.
func (k *Keyring) ActiveKeyID() string {
	if k == nil {
		return ""
	}
	return k.activeID
}

// KeyIDs returns every key id in configuration order, active first.
func (k *Keyring) KeyIDs() []string {
	if k == nil {
		return nil
	}
	return slices.Clone(k.ids)
}

// String describes the keyring by key ids only, so logging or printing a
// configuration that holds it cannot reveal keys.
func (k *Keyring) String() string {
	if k == nil {
		return "Keyring(<nil>)"
	}
	return fmt.Sprintf("Keyring(active=%s, keys=%s)", k.activeID, strings.Join(k.ids, ","))
}
