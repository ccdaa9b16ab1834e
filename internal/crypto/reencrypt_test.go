package crypto_test

import (
	"errors"
	"testing"

	"github.com/hubctl/hubctl/internal/crypto"
)

func TestReencrypt(t *testing.T) {
	old := mustParseKeyring(t, "old:"+b64(testKey("old")))
	rotating := mustParseKeyring(t, "new:"+b64(testKey("new"))+",old:"+b64(testKey("old")))
	newOnly := mustParseKeyring(t, "new:"+b64(testKey("new")))
	const row, field = "0190b6a2-7c1e-7d3a-9f00-123456789abc", "signing_secret"
	underOld := mustEncrypt(t, old, []byte("whsec_s3cret"), row, field)

	sealed, changed, err := rotating.Reencrypt(underOld, row, field)
	if err != nil || !changed {
		t.Fatalf("Reencrypt of an envelope under the old key = changed %v, %v; want a new envelope", changed, err)
	}
	if id, _ := crypto.EnvelopeKeyID(sealed); id != "new" {
		t.Errorf("re-encrypted envelope is under %q, want the active key new", id)
	}
	plaintext, err := newOnly.Decrypt(sealed, row, field)
	if err != nil || string(plaintext) != "whsec_s3cret" {
		t.Errorf("the new key alone decrypts %q, %v; want the original secret", plaintext, err)
	}
	if _, err := newOnly.Decrypt(sealed, "another-row", field); !errors.Is(err, crypto.ErrAuthentication) {
		t.Errorf("re-encrypted envelope opened for another row: %v; it must stay bound to its row", err)
	}

	again, changed, err := rotating.Reencrypt(sealed, row, field)
	if err != nil || changed || again != sealed {
		t.Errorf("Reencrypt of a current envelope = %v, %v; want it unchanged", changed, err)
	}

	if _, _, err := newOnly.Reencrypt(underOld, row, field); !errors.Is(err, crypto.ErrUnknownKey) {
		t.Errorf("Reencrypt without the old key = %v; want ErrUnknownKey", err)
	}
	if _, _, err := rotating.Reencrypt(underOld, row, "previous_secret"); !errors.Is(err, crypto.ErrAuthentication) {
		t.Errorf("Reencrypt for another field = %v; want ErrAuthentication", err)
	}
	if _, _, err := rotating.Reencrypt("plaintext-by-mistake", row, field); !errors.Is(err, crypto.ErrMalformed) {
		t.Errorf("Reencrypt of a malformed value = %v; want ErrMalformed", err)
	}
	// A current-looking envelope that does not authenticate is reported too.
	forged := []byte(sealed)
	if i := len(forged) - 5; forged[i] == 'A' { // another base64url letter, inside the tag
		forged[i] = 'B'
	} else {
		forged[i] = 'A'
	}
	if _, _, err := rotating.Reencrypt(string(forged), row, field); !errors.Is(err, crypto.ErrAuthentication) {
		t.Errorf("Reencrypt of a tampered current envelope = %v; want ErrAuthentication", err)
	}
}

func TestEnvelopeKeyID(t *testing.T) {
	kr := mustParseKeyring(t, "k-2026:"+b64(testKey("a")))
	id, err := crypto.EnvelopeKeyID(mustEncrypt(t, kr, []byte("x"), "row", "field"))
	if err != nil || id != "k-2026" {
		t.Errorf("EnvelopeKeyID = %q, %v; want k-2026", id, err)
	}
	for _, bad := range []string{"", "v1", "v2:k:AAAA", "v1:bad id:AAAA", "v1:k:short"} {
		if _, err := crypto.EnvelopeKeyID(bad); !errors.Is(err, crypto.ErrMalformed) {
			t.Errorf("EnvelopeKeyID(%q) = %v; want ErrMalformed", bad, err)
		}
	}
}
