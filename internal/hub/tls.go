package hub

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"

	"github.com/hubctl/hubctl/internal/certfile"
	"github.com/hubctl/hubctl/internal/config"
)

// listenerTLS sets srv up to serve the API, the portal and the metrics over
// TLS when STREAMING_HUB_HTTP_TLS_CERT_FILE is set, and returns how to
// serve a listener. The certificate files are read again when they change,
// so a certificate renewed on disk (as cert-manager renews them) is served
// from the next handshake without a restart.
func listenerTLS(cfg *config.Config, srv *http.Server) (func(net.Listener) error, error) {
	if cfg.HTTPTLSCertFile == "" {
		return srv.Serve, nil
	}
	pair := certfile.KeyPair(cfg.HTTPTLSCertFile, cfg.HTTPTLSKeyFile)
	if _, err := pair.Get(); err != nil {
		return nil, fmt.Errorf("%sHTTP_TLS_CERT_FILE/_KEY_FILE: %w", config.EnvPrefix, err)
	}
	srv.TLSConfig = &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			cert, err := pair.Get()
			if err != nil {
				// Said in the server's error log for each handshake it fails.
				return nil, fmt.Errorf("%sHTTP_TLS_CERT_FILE/_KEY_FILE: %w", config.EnvPrefix, err)
			}
			return cert, nil
		},
	}
	// ServeTLS with no file names takes the certificate from TLSConfig and
	// offers HTTP/2 as ListenAndServeTLS would.
	return func(l net.Listener) error { return srv.ServeTLS(l, "", "") }, nil
}
