package pubsub

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"testing"

	"github.com/google/uuid"
)

// testKey is a service-account key file's content with a fresh RSA key,
// one the client library accepts.
func testKey(t testing.TB) string {
	t.Helper()
	private, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(private)
	if err != nil {
		t.Fatal(err)
	}
	key, err := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     "acme-prod",
		"private_key_id": "0123456789abcdef" + uuid.NewString(),
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   "hub-publisher@acme-prod.iam.gserviceaccount.com",
		"client_id":      "123456789012345678901",
		"token_uri":      googleTokenURI,
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(key)
}
