package sink

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

func TestNewTransportSpeaksHTTP2ThroughTheGivenDialAndRoots(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	var dials atomic.Int32
	transport := NewTransport(TransportOptions{Dial: countingDial(&dials), RootCAs: serverRoots(srv)})
	defer transport.CloseIdleConnections()

	resp, err := (&http.Client{Transport: transport}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Errorf("response protocol = %s, want HTTP/2", resp.Proto)
	}
	if dials.Load() == 0 {
		t.Error("the transport did not connect through the given Dial")
	}
}

// Go's own client default hides a lost MinVersion from any handshake a test
// could make, so the setting itself is checked: a GODEBUG must not be able
// to lower it.
func TestNewTransportRequiresTLS12(t *testing.T) {
	transport := NewTransport(TransportOptions{})
	if got := transport.TLSClientConfig.MinVersion; got < tls.VersionTLS12 {
		t.Errorf("TLS MinVersion = %s, want TLS 1.2 or later", tls.VersionName(got))
	}
}

func countingDial(count *atomic.Int32) func(context.Context, string, string) (net.Conn, error) {
	var dialer net.Dialer
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		count.Add(1)
		return dialer.DialContext(ctx, network, address)
	}
}

// serverRoots trusts srv's certificate, which the system pool does not.
func serverRoots(srv *httptest.Server) *x509.CertPool {
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	return roots
}
