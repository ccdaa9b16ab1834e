package certfile

import (
	"net"
	"path/filepath"
	"testing"

	"github.com/hubctl/hubctl/internal/testutil/testpki"
)

// TestKeyPairFollowsTheFiles: the pair is parsed once per change; a
// half-written renewal (a key of another certificate) is an error, not the
// old pair, and the finished renewal is the new pair.
func TestKeyPairFollowsTheFiles(t *testing.T) {
	ca := testpki.MustCA(t, "certfile CA")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	loopback := []net.IP{net.IPv4(127, 0, 0, 1)}
	first, second := ca.Server(t, loopback), ca.Server(t, loopback)
	first.Write(t, certFile, keyFile)

	pair := KeyPair(certFile, keyFile)
	got, err := pair.Get()
	if err != nil || string(got.Certificate[0]) != string(first.TLS.Certificate[0]) {
		t.Fatalf("first pair: %v", err)
	}
	if again, _ := pair.Get(); again != got {
		t.Fatal("unchanged files were parsed again")
	}

	testpki.WriteFile(t, keyFile, second.KeyPEM) // the key written, not yet the certificate
	if _, err := pair.Get(); err == nil {
		t.Fatal("a key of another certificate was accepted")
	}
	testpki.WriteFile(t, certFile, second.CertPEM)
	got, err = pair.Get()
	if err != nil || string(got.Certificate[0]) != string(second.TLS.Certificate[0]) {
		t.Fatalf("renewed pair: %v", err)
	}
}

func TestPoolRefusesAFileWithoutCertificates(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ca.pem")
	testpki.WriteFile(t, file, []byte("not PEM"))
	if _, err := Pool(file).Get(); err == nil {
		t.Fatal("a file without certificates made a pool")
	}
}
