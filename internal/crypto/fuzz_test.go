package crypto_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/hubctl/hubctl/internal/crypto"
)

// FuzzDecrypt feeds arbitrary envelopes and associated data to a keyring that
// holds the golden key. Decrypt must never panic, must fail only with the
// documented errors, and must accept nothing but the golden envelope in its
// own context: anything else would be a forgery. Seeds live in
// testdata/fuzz/FuzzDecrypt.
func FuzzDecrypt(f *testing.F) {
	kr := mustParseKeyring(f, goldenKeyring+",retired:"+b64(testKey("retired")))
	f.Add(goldenEnvelope, testRowID, testField)
	f.Add(mustEncrypt(f, kr, []byte("fresh"), "r", "f"), "r", "f")

	f.Fuzz(func(t *testing.T, envelope, rowID, field string) {
		plaintext, err := kr.Decrypt(envelope, rowID, field)
		kr.NeedsReencrypt(envelope)
		if err != nil {
			for _, documented := range []error{crypto.ErrMalformed, crypto.ErrAuthentication, crypto.ErrUnknownKey, crypto.ErrNoAssociatedData} {
				if errors.Is(err, documented) {
					return
				}
			}
			t.Fatalf("Decrypt(%q, %q, %q): undocumented error %v", envelope, rowID, field, err)
		}
		isGolden := envelope == goldenEnvelope && rowID == testRowID && field == testField
		isFreshSeed := string(plaintext) == "fresh" && rowID == "r" && field == "f"
		if !isGolden && !isFreshSeed {
			t.Fatalf("Decrypt(%q, %q, %q) accepted a forged envelope: %q", envelope, rowID, field, plaintext)
		}
	})
}

// FuzzRoundTrip checks that whatever is encrypted for a row and field comes
// back unchanged for exactly that row and field. Seeds live in
// testdata/fuzz/FuzzRoundTrip.
func FuzzRoundTrip(f *testing.F) {
	kr := mustParseKeyring(f, "fuzz:"+b64(testKey("fuzz")))
	f.Add([]byte("whsec_seed"), testRowID, testField)

	f.Fuzz(func(t *testing.T, plaintext []byte, rowID, field string) {
		envelope, err := kr.Encrypt(plaintext, rowID, field)
		if rowID == "" || field == "" {
			if !errors.Is(err, crypto.ErrNoAssociatedData) {
				t.Fatalf("Encrypt with empty row id or field: err = %v, want ErrNoAssociatedData", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Encrypt: %v", err)
		}
		got, err := kr.Decrypt(envelope, rowID, field)
		if err != nil {
			t.Fatalf("Decrypt of a fresh envelope: %v", err)
		}
		if !bytes.Equal(got, plaintext) {
			t.Fatalf("round trip changed %q into %q", plaintext, got)
		}
		if _, err := kr.Decrypt(envelope, rowID+"x", field); !errors.Is(err, crypto.ErrAuthentication) {
			t.Fatalf("Decrypt under another row id: err = %v, want ErrAuthentication", err)
		}
	})
}
