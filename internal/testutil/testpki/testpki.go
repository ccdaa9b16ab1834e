// Package testpki issues the certificates of TLS tests: an authority, the
// servers' certificates it signs and the clients' it signs, all in memory
// and valid for a day.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"testing"
	"time"
)

// CA is a certificate authority.
type CA struct {
	Cert    *x509.Certificate
	CertPEM []byte
	key     *ecdsa.PrivateKey
}

// NewCA makes an authority named name. It returns an error rather than
// failing a test so TestMain can make one too.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	return &CA{Cert: cert, key: key, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// MustCA is NewCA for a test.
func MustCA(t testing.TB, name string) *CA {
	t.Helper()
	ca, err := NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// Pool is a pool holding only this authority.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return pool
}

// Leaf is an issued certificate with its key.
type Leaf struct {
	CertPEM, KeyPEM []byte
	Serial          string
	TLS             tls.Certificate
}

// Write puts the leaf in two files the way a secret mount or cert-manager
// replaces them: each a new file renamed over the old one, the key first,
// so a reader between the two sees a pair that fails to match rather than
// half a file.
func (l Leaf) Write(t testing.TB, certFile, keyFile string) {
	t.Helper()
	WriteFile(t, keyFile, l.KeyPEM)
	WriteFile(t, certFile, l.CertPEM)
}

// WriteFile replaces path with data by renaming a new file over it.
func WriteFile(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// Server issues a server certificate for ips and names.
func (ca *CA) Server(t testing.TB, ips []net.IP, names ...string) Leaf {
	t.Helper()
	return ca.issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "test server"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: ips,
		DNSNames:    names,
	})
}

// ServerConfig is a server TLS config with a certificate for ips.
func (ca *CA) ServerConfig(t testing.TB, ips []net.IP) *tls.Config {
	t.Helper()
	leaf := ca.Server(t, ips)
	return &tls.Config{Certificates: []tls.Certificate{leaf.TLS}, MinVersion: tls.VersionTLS12}
}

// Client issues a client certificate named name.
func (ca *CA) Client(t testing.TB, name string) Leaf {
	t.Helper()
	return ca.issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func (ca *CA) issue(t testing.TB, template *x509.Certificate) Leaf {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	template.SerialNumber = serial
	template.NotBefore = time.Now().Add(-time.Hour)
	template.NotAfter = time.Now().Add(24 * time.Hour)
	template.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, template, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return Leaf{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		Serial:  serial.String(),
		TLS:     tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
	}
}
