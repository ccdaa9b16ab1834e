package hub

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/testutil/testpki"
)

// TestListenerServesARenewedCertificate: with the TLS settings the
// listener speaks HTTPS (HTTP/2 offered), and a certificate replaced on
// disk is what the next connection gets, without a restart.
func TestListenerServesARenewedCertificate(t *testing.T) {
	ca := testpki.MustCA(t, "hub listener test CA")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	loopback := []net.IP{net.IPv4(127, 0, 0, 1)}
	first := ca.Server(t, loopback)
	first.Write(t, certFile, keyFile)

	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(r.Proto))
	})}
	serve, err := listenerTLS(&config.Config{HTTPTLSCertFile: certFile, HTTPTLSKeyFile: keyFile}, srv)
	if err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serve(listener) }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})

	servedSerial := func() (serial, proto string) {
		t.Helper()
		// A new transport per call: a new connection, a new handshake.
		client := &http.Client{Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12},
			ForceAttemptHTTP2: true,
		}}
		defer client.CloseIdleConnections()
		resp, err := client.Get("https://" + listener.Addr().String() + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.TLS.PeerCertificates[0].SerialNumber.String(), resp.Proto
	}
	if serial, proto := servedSerial(); serial != first.Serial || proto != "HTTP/2.0" {
		t.Fatalf("served certificate %s over %s, want %s over HTTP/2.0", serial, proto, first.Serial)
	}

	renewed := ca.Server(t, loopback)
	renewed.Write(t, certFile, keyFile)
	if serial, _ := servedSerial(); serial != renewed.Serial {
		t.Fatalf("after renewal the listener served %s, want the renewed %s", serial, renewed.Serial)
	}
}

func TestListenerRefusesUnreadableCertificates(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	testpki.WriteFile(t, certFile, []byte("not a certificate"))
	testpki.WriteFile(t, keyFile, []byte("not a key"))
	_, err := listenerTLS(&config.Config{HTTPTLSCertFile: certFile, HTTPTLSKeyFile: keyFile}, &http.Server{})
	if err == nil {
		t.Fatal("start-up went on with a certificate that does not parse")
	}
	t.Logf("refused with: %v", err)
}
