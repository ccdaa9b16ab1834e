package kafkaclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/hubctl/hubctl/internal/certfile"
	"github.com/hubctl/hubctl/internal/config"
)

// tlsConfig checks the brokers against the system's authorities, or
// against STREAMING_HUB_KAFKA_TLS_CA_FILE, and presents the client
// certificate of STREAMING_HUB_KAFKA_TLS_CERT_FILE/_KEY_FILE. Both files are
// read again when they change on disk (as cert-manager renews them), so a
// renewed certificate or a fixed authority is used from the next
// connection without a restart.
func tlsConfig(k config.KafkaConfig) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if k.TLSCertFile != "" {
		pair := certfile.KeyPair(k.TLSCertFile, k.TLSKeyFile)
		if _, err := pair.Get(); err != nil {
			return nil, fmt.Errorf("%sKAFKA_TLS_CERT_FILE/_KEY_FILE: %w", config.EnvPrefix, err)
		}
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, err := pair.Get()
			if err != nil {
				return nil, fmt.Errorf("%sKAFKA_TLS_CERT_FILE/_KEY_FILE: %w", config.EnvPrefix, err)
			}
			return cert, nil
		}
	}
	if k.TLSCAFile != "" {
		authority := certfile.Pool(k.TLSCAFile)
		if _, err := authority.Get(); err != nil {
			return nil, fmt.Errorf("%sKAFKA_TLS_CA_FILE: %w", config.EnvPrefix, err)
		}
		// The standard verification runs in VerifyConnection against the
		// pool read now; InsecureSkipVerify only moves it there, since
		// RootCAs cannot change once the config is in use.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			roots, err := authority.Get()
			if err != nil {
				return fmt.Errorf("%sKAFKA_TLS_CA_FILE: %w", config.EnvPrefix, err)
			}
			return verifyChain(cs, roots)
		}
	}
	return cfg, nil
}

// verifyChain is what crypto/tls verifies of a server when RootCAs is
// roots: the chain to one of them, and the name dialed.
func verifyChain(cs tls.ConnectionState, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("tls: the broker presented no certificate")
	}
	intermediates := x509.NewCertPool()
	for _, cert := range cs.PeerCertificates[1:] {
		intermediates.AddCert(cert)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
		DNSName:       cs.ServerName,
		Roots:         roots,
		Intermediates: intermediates,
	})
	return err
}
