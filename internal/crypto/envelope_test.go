package crypto_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/hubctl/hubctl/internal/crypto"
)

const (
	testRowID = "0190f5c2-7a3b-7cc4-9a4e-2d1f3b5c6d7e"
	testField = "signing_secret"
)

// goldenKeyring and goldenEnvelope were produced once by this package. The
// envelope must decrypt forever: a change to the key derivation, the
// associated-data encoding or the format would orphan every stored secret.
const (
	goldenKeyring   = "golden:Vy5OdX50rGK7/3Ap0UylQjsjSpJF3um6GItdEgqkg/s="
	goldenEnvelope  = "v1:golden:wC0Qvf-WMu3onMro-hDTBcc-Wj-dvy0EFsI28CJOFPoO20vld6lZzfYXRxk-AhdH5bhALupl8g"
	goldenPlaintext = "whsec_golden-example-secret"
)

func TestDecryptGoldenEnvelope(t *testing.T) {
	got, err := mustParseKeyring(t, goldenKeyring).Decrypt(goldenEnvelope, testRowID, testField)
	if err != nil {
		t.Fatalf("Decrypt: %v", err)
	}
	if string(got) != goldenPlaintext {
		t.Errorf("Decrypt = %q, want %q", got, goldenPlaintext)
	}
}

func TestEncryptDecryptRoundTrip(t *testing.T) {
	kr := mustParseKeyring(t, "active:"+b64(testKey("active")))
	tests := []struct {
		name      string
		plaintext []byte
		rowID     string
		field     string
	}{
		{"signing secret", []byte("whsec_" + strings.Repeat("A", 43)), testRowID, testField},
		{"empty plaintext", []byte{}, testRowID, testField},
		{"binary plaintext", []byte{0x00, 0xff, 0x00, 0x80}, testRowID, "sink.secret_access_key"},
		{"large plaintext", bytes.Repeat([]byte("credential"), 100_000), testRowID, "sink.url_password"},
		{"unicode ids", []byte("s3cr3t"), "ligne-é", "champ\x00ü"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			envelope := mustEncrypt(t, kr, tt.plaintext, tt.rowID, tt.field)
			if !strings.HasPrefix(envelope, "v1:active:") {
				t.Errorf("envelope %q lacks the v1:active: prefix", envelope)
			}
			for i := 0; i < len(envelope); i++ {
				if c := envelope[i]; c < 0x21 || c > 0x7e {
					t.Fatalf("envelope byte %d is %#x, not printable ASCII", i, c)
				}
			}
			got, err := kr.Decrypt(envelope, tt.rowID, tt.field)
			if err != nil {
				t.Fatalf("Decrypt: %v", err)
			}
			if !bytes.Equal(got, tt.plaintext) {
				t.Errorf("Decrypt returned %d bytes, want the %d encrypted", len(got), len(tt.plaintext))
			}
		})
	}
}

func TestEncryptUsesAFreshNonceEachCall(t *testing.T) {
	kr := mustParseKeyring(t, b64(testKey("nonce")))
	first := mustEncrypt(t, kr, []byte("same"), testRowID, testField)
	second := mustEncrypt(t, kr, []byte("same"), testRowID, testField)
	if first == second {
		t.Errorf("two encryptions of one plaintext are identical: %q", first)
	}
}

func TestDecryptDetectsTamperingWithEveryByte(t *testing.T) {
	kr := mustParseKeyring(t, "k:"+b64(testKey("tamper")))
	envelope := mustEncrypt(t, kr, []byte("whsec_tamper-me"), testRowID, testField)
	header, payload := splitEnvelope(t, envelope)
	sealed, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		t.Fatalf("decoding payload: %v", err)
	}
	// Every byte is nonce (0-11), ciphertext, or tag (last 16).
	for i := range sealed {
		for _, mask := range []byte{0x01, 0x80} {
			tampered := bytes.Clone(sealed)
			tampered[i] ^= mask
			forged := header + base64.RawURLEncoding.EncodeToString(tampered)
			if _, err := kr.Decrypt(forged, testRowID, testField); !errors.Is(err, crypto.ErrAuthentication) {
				t.Errorf("byte %d ^ %#x: err = %v, want ErrAuthentication", i, mask, err)
			}
		}
	}
	truncated := header + base64.RawURLEncoding.EncodeToString(sealed[:len(sealed)-1])
	if _, err := kr.Decrypt(truncated, testRowID, testField); !errors.Is(err, crypto.ErrAuthentication) {
		t.Errorf("truncated tag: err = %v, want ErrAuthentication", err)
	}
	extended := header + base64.RawURLEncoding.EncodeToString(append(bytes.Clone(sealed), 0))
	if _, err := kr.Decrypt(extended, testRowID, testField); !errors.Is(err, crypto.ErrAuthentication) {
		t.Errorf("appended byte: err = %v, want ErrAuthentication", err)
	}
}

func TestDecryptRejectsWrongKeyOrContext(t *testing.T) {
	kr := mustParseKeyring(t, "k1:"+b64(testKey("right")))
	sameIDOtherKey := mustParseKeyring(t, "k1:"+b64(testKey("wrong")))

	tests := []struct {
		name                     string
		encryptRow, encryptField string
		decrypter                *crypto.Keyring
		decryptRow, decryptField string
	}{
		{"wrong KEK under the same id", testRowID, testField, sameIDOtherKey, testRowID, testField},
		{"wrong row id", testRowID, testField, kr, "0190f5c2-7a3b-7cc4-9a4e-2d1f3b5c6d7f", testField},
		{"wrong field", testRowID, "signing_secret", kr, testRowID, "previous_signing_secret"},
		{"row and field swapped", "a", "b", kr, "b", "a"},
		{"boundary moved right", "ab", "c", kr, "a", "bc"},
		{"boundary moved left", "a", "bc", kr, "ab", "c"},
		{"NUL separator would collide", "a\x00b", "c", kr, "a", "b\x00c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			envelope := mustEncrypt(t, kr, []byte("secret"), tt.encryptRow, tt.encryptField)
			if _, err := tt.decrypter.Decrypt(envelope, tt.decryptRow, tt.decryptField); !errors.Is(err, crypto.ErrAuthentication) {
				t.Errorf("err = %v, want ErrAuthentication", err)
			}
		})
	}
}

func TestDecryptAfterRotation(t *testing.T) {
	oldKey, newKey := b64(testKey("old")), b64(testKey("new"))
	before := mustParseKeyring(t, "old:"+oldKey)
	after := mustParseKeyring(t, "new:"+newKey+",old:"+oldKey)
	envelope := mustEncrypt(t, before, []byte("whsec_rotated"), testRowID, testField)

	if before.NeedsReencrypt(envelope) {
		t.Error("NeedsReencrypt under the key that made it = true")
	}
	if !after.NeedsReencrypt(envelope) {
		t.Error("NeedsReencrypt after rotation = false")
	}
	plaintext, err := after.Decrypt(envelope, testRowID, testField)
	if err != nil {
		t.Fatalf("Decrypt with the retired key: %v", err)
	}
	if string(plaintext) != "whsec_rotated" {
		t.Errorf("Decrypt = %q", plaintext)
	}

	reencrypted := mustEncrypt(t, after, plaintext, testRowID, testField)
	if !strings.HasPrefix(reencrypted, "v1:new:") {
		t.Errorf("re-encrypted envelope %q is not under the active key", reencrypted)
	}
	if after.NeedsReencrypt(reencrypted) {
		t.Error("NeedsReencrypt of a re-encrypted envelope = true")
	}
}

func TestDecryptUnknownKey(t *testing.T) {
	writer := mustParseKeyring(t, "retired:"+b64(testKey("retired")))
	reader := mustParseKeyring(t, "current:"+b64(testKey("current")))
	envelope := mustEncrypt(t, writer, []byte("secret"), testRowID, testField)

	_, err := reader.Decrypt(envelope, testRowID, testField)
	if !errors.Is(err, crypto.ErrUnknownKey) {
		t.Fatalf("err = %v, want ErrUnknownKey", err)
	}
	var unknown *crypto.UnknownKeyError
	if !errors.As(err, &unknown) || unknown.KeyID != "retired" {
		t.Errorf("err = %#v, want an *UnknownKeyError for key id \"retired\"", err)
	}
	if !strings.Contains(err.Error(), `"retired"`) {
		t.Errorf("message %q does not name the key id", err)
	}
	if !reader.NeedsReencrypt(envelope) {
		t.Error("NeedsReencrypt of an envelope under an unknown key = false")
	}
}

func TestDecryptMalformed(t *testing.T) {
	kr := mustParseKeyring(t, "k1:"+b64(testKey("malformed")))
	valid := mustEncrypt(t, kr, []byte("secret"), testRowID, testField)
	_, payload := splitEnvelope(t, valid)
	shortPayload := base64.RawURLEncoding.EncodeToString(make([]byte, 27))

	tests := []struct {
		name     string
		envelope string
	}{
		{"empty", ""},
		{"plaintext secret", "whsec_plaintext-stored-by-mistake"},
		{"version only", "v1"},
		{"version and colon", "v1:"},
		{"unknown version", "v2:k1:" + payload},
		{"uppercase version", "V1:k1:" + payload},
		{"no payload", "v1:k1"},
		{"empty payload", "v1:k1:"},
		{"empty key id", "v1::" + payload},
		{"invalid key id", "v1:k.1:" + payload},
		{"key id too long", "v1:" + strings.Repeat("k", 33) + ":" + payload},
		{"payload not base64", "v1:k1:" + payload[:10] + "!" + payload[11:]},
		{"padded payload", "v1:k1:" + base64.URLEncoding.EncodeToString([]byte("0123456789abcdefghijklmnopqrstuvwxyzABCD"))},
		{"standard alphabet payload", "v1:k1:" + base64.RawStdEncoding.EncodeToString(bytes.Repeat([]byte{0xfb, 0xff}, 20))},
		{"line break in payload", "v1:k1:" + payload[:20] + "\n" + payload[20:]},
		{"extra colon", "v1:k1:" + payload + ":"},
		{"payload shorter than nonce and tag", "v1:k1:" + shortPayload},
		{"surrounding whitespace", " " + valid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kr.Decrypt(tt.envelope, testRowID, testField)
			if !errors.Is(err, crypto.ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			if tt.envelope != "" {
				assertNoSecret(t, err.Error(), tt.envelope)
			}
			if kr.NeedsReencrypt(tt.envelope) {
				t.Error("NeedsReencrypt of a malformed envelope = true")
			}
		})
	}
}

func TestEmptyRowIDOrFieldIsRefused(t *testing.T) {
	kr := mustParseKeyring(t, b64(testKey("ad")))
	envelope := mustEncrypt(t, kr, []byte("secret"), testRowID, testField)
	for _, tt := range []struct{ rowID, field string }{
		{"", testField},
		{testRowID, ""},
		{"", ""},
	} {
		if _, err := kr.Encrypt([]byte("secret"), tt.rowID, tt.field); !errors.Is(err, crypto.ErrNoAssociatedData) {
			t.Errorf("Encrypt(row %q, field %q): err = %v, want ErrNoAssociatedData", tt.rowID, tt.field, err)
		}
		if _, err := kr.Decrypt(envelope, tt.rowID, tt.field); !errors.Is(err, crypto.ErrNoAssociatedData) {
			t.Errorf("Decrypt(row %q, field %q): err = %v, want ErrNoAssociatedData", tt.rowID, tt.field, err)
		}
	}
}

func TestUnparsedKeyringFailsInsteadOfPanicking(t *testing.T) {
	valid := mustEncrypt(t, mustParseKeyring(t, b64(testKey("x"))), []byte("s"), testRowID, testField)
	for name, kr := range map[string]*crypto.Keyring{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			if _, err := kr.Encrypt([]byte("s"), testRowID, testField); err == nil {
				t.Error("Encrypt succeeded")
			}
			if _, err := kr.Decrypt(valid, testRowID, testField); err == nil {
				t.Error("Decrypt succeeded")
			}
			if kr.NeedsReencrypt(valid) {
				t.Error("NeedsReencrypt = true")
			}
			if id := kr.ActiveKeyID(); id != "" {
				t.Errorf("ActiveKeyID = %q", id)
			}
		})
	}
}

func TestConcurrentUse(t *testing.T) {
	oldKey := b64(testKey("old"))
	retired := mustEncrypt(t, mustParseKeyring(t, "old:"+oldKey), []byte("old secret"), testRowID, testField)
	kr := mustParseKeyring(t, "new:"+b64(testKey("new"))+",old:"+oldKey)

	const goroutines, rounds = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			plaintext := []byte{byte(g)}
			for range rounds {
				envelope, err := kr.Encrypt(plaintext, testRowID, testField)
				if err != nil {
					errs <- err
					return
				}
				got, err := kr.Decrypt(envelope, testRowID, testField)
				if err != nil || !bytes.Equal(got, plaintext) {
					errs <- errors.Join(errors.New("round trip mismatch"), err)
					return
				}
				if _, err := kr.Decrypt(retired, testRowID, testField); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// splitEnvelope returns "v1:<key id>:" and the payload after it.
func splitEnvelope(t *testing.T, envelope string) (header, payload string) {
	t.Helper()
	i := strings.LastIndexByte(envelope, ':')
	if i < 0 {
		t.Fatalf("envelope %q has no colon", envelope)
	}
	return envelope[:i+1], envelope[i+1:]
}

func benchmarkKeyring(b *testing.B) *crypto.Keyring {
	b.Helper()
	return mustParseKeyring(b, "bench:"+b64(testKey("bench")))
}

func BenchmarkEncrypt(b *testing.B) {
	kr := benchmarkKeyring(b)
	secret := bytes.Repeat([]byte("s"), 64)
	b.SetBytes(int64(len(secret)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kr.Encrypt(secret, testRowID, testField); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecrypt(b *testing.B) {
	kr := benchmarkKeyring(b)
	secret := bytes.Repeat([]byte("s"), 64)
	envelope := mustEncrypt(b, kr, secret, testRowID, testField)
	b.SetBytes(int64(len(secret)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kr.Decrypt(envelope, testRowID, testField); err != nil {
			b.Fatal(err)
		}
	}
}
