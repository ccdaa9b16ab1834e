package crypto_test

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/crypto"
)

// testKey returns 32 fixed, random-looking bytes per label, so tests are
// deterministic and key material is recognisable if it ever leaks.
func testKey(label string) []byte {
	sum := sha256.Sum256([]byte("hubctl crypto test key: " + label))
	return sum[:]
}

func b64(material []byte) string { return base64.StdEncoding.EncodeToString(material) }

func mustParseKeyring(t testing.TB, value string) *crypto.Keyring {
	t.Helper()
	kr, err := crypto.ParseKeyring(value)
	if err != nil {
		t.Fatalf("ParseKeyring: %v", err)
	}
	return kr
}

func mustEncrypt(t testing.TB, kr *crypto.Keyring, plaintext []byte, rowID, field string) string {
	t.Helper()
	envelope, err := kr.Encrypt(plaintext, rowID, field)
	if err != nil {
		t.Fatalf("Encrypt: %v", err)
	}
	return envelope
}

// assertNoSecret fails when msg contains any 6-character window of secret:
// not just the whole key, but no recognisable fragment of it either.
func assertNoSecret(t *testing.T, msg, secret string) {
	t.Helper()
	const window = 6
	if len(secret) < window {
		if secret != "" && strings.Contains(msg, secret) {
			t.Errorf("message %q contains secret %q", msg, secret)
		}
		return
	}
	for i := 0; i+window <= len(secret); i++ {
		if fragment := secret[i : i+window]; strings.Contains(msg, fragment) {
			t.Errorf("message %q contains fragment %q of a secret", msg, fragment)
			return
		}
	}
}
