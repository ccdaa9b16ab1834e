package crypto_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/crypto"
)

func TestRandomSecret(t *testing.T) {
	seen := make(map[string]bool)
	for range 16 {
		secret, err := crypto.RandomSecret()
		if err != nil {
			t.Fatalf("RandomSecret: %v", err)
		}
		encoded, ok := strings.CutPrefix(secret, "whsec_")
		if !ok {
			t.Fatalf("secret %q lacks the whsec_ prefix", secret)
		}
		raw, err := base64.RawURLEncoding.Strict().DecodeString(encoded)
		if err != nil {
			t.Fatalf("secret %q is not whsec_ + unpadded base64url: %v", secret, err)
		}
		if len(raw) != 32 {
			t.Errorf("secret %q holds %d random bytes, want 32", secret, len(raw))
		}
		if seen[secret] {
			t.Fatalf("RandomSecret repeated %q", secret)
		}
		seen[secret] = true
	}
}

func TestRandomStandardSecret(t *testing.T) {
	seen := make(map[string]bool)
	for range 16 {
		secret, err := crypto.RandomStandardSecret()
		if err != nil {
			t.Fatalf("RandomStandardSecret: %v", err)
		}
		encoded, ok := strings.CutPrefix(secret, "whsec_")
		if !ok {
			t.Fatalf("secret %q lacks the whsec_ prefix", secret)
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(encoded)
		if err != nil {
			t.Fatalf("secret %q is not whsec_ + standard base64: %v", secret, err)
		}
		if len(raw) != 32 {
			t.Errorf("secret %q holds %d random bytes, want 32", secret, len(raw))
		}
		if seen[secret] {
			t.Fatalf("RandomStandardSecret repeated %q", secret)
		}
		seen[secret] = true
	}
}

func TestNewAPIToken(t *testing.T) {
	token, hash, err := crypto.NewAPIToken()
	if err != nil {
		t.Fatalf("NewAPIToken: %v", err)
	}
	encoded, ok := strings.CutPrefix(token, crypto.APITokenPrefix)
	if !ok {
		t.Fatalf("token %q lacks the %q prefix", token, crypto.APITokenPrefix)
	}
	if raw, err := base64.RawURLEncoding.Strict().DecodeString(encoded); err != nil || len(raw) != 32 {
		t.Errorf("token %q is not the prefix + 32 random bytes as unpadded base64url (err %v)", token, err)
	}
	if want := crypto.HashAPIToken(token); !bytes.Equal(hash, want) {
		t.Errorf("returned hash %x differs from HashAPIToken %x", hash, want)
	}
	other, _, err := crypto.NewAPIToken()
	if err != nil {
		t.Fatalf("NewAPIToken: %v", err)
	}
	if other == token {
		t.Errorf("NewAPIToken repeated %q", token)
	}
}

func TestHashAPITokenIsSHA256OfTheWholeToken(t *testing.T) {
	// Pinned: stored hashes must keep matching the tokens tenants hold.
	const token = "hub_example"
	want := sha256.Sum256([]byte(token))
	if got := crypto.HashAPIToken(token); !bytes.Equal(got, want[:]) {
		t.Errorf("HashAPIToken(%q) = %x, want %x", token, got, want)
	}
	if got, want := hex.EncodeToString(crypto.HashAPIToken("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"; got != want {
		t.Errorf("HashAPIToken(\"\") = %s, want %s", got, want)
	}
}

func TestConstantTimeEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"admin-token", "admin-token", true},
		{"", "", true},
		{"admin-token", "admin-tokeN", false},
		{"admin-token", "admin-token ", false},
		{"admin-token", "admin", false},
		{"admin-token", "", false},
		{"", "admin-token", false},
	}
	for _, tt := range tests {
		if got := crypto.ConstantTimeEqual(tt.a, tt.b); got != tt.want {
			t.Errorf("ConstantTimeEqual(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
