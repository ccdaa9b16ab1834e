package kafkaclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

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
		pair := &watchedFiles[tls.Certificate]{paths: []string{k.TLSCertFile, k.TLSKeyFile}, parse: parseKeyPair}
		if _, err := pair.get(); err != nil {
			return nil, fmt.Errorf("%sKAFKA_TLS_CERT_FILE/_KEY_FILE: %w", config.EnvPrefix, err)
		}
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, err := pair.get()
			if err != nil {
				return nil, fmt.Errorf("%sKAFKA_TLS_CERT_FILE/_KEY_FILE: %w", config.EnvPrefix, err)
			}
			return cert, nil
		}
	}
	if k.TLSCAFile != "" {
		authority := &watchedFiles[x509.CertPool]{paths: []string{k.TLSCAFile}, parse: parseCertPool}
		if _, err := authority.get(); err != nil {
			return nil, fmt.Errorf("%sKAFKA_TLS_CA_FILE: %w", config.EnvPrefix, err)
		}
		// The standard verification runs in VerifyConnection against the
		// pool read now; InsecureSkipVerify only moves it there, since
		// RootCAs cannot change once the config is in use.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			roots, err := authority.get()
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

func parseKeyPair(contents [][]byte) (*tls.Certificate, error) {
	cert, err := tls.X509KeyPair(contents[0], contents[1])
	if err != nil {
		return nil, err
	}
	return &cert, nil
}

func parseCertPool(contents [][]byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(contents[0]) {
		return nil, errors.New("no PEM certificate in the file")
	}
	return pool, nil
}

// watchedFiles is the value parsed from some files, parsed again when any
// of them changes (its modification time or size). A change that does not
// parse keeps nothing: the error is returned until the files are fixed, as
// connecting with a stale credential would hide that they are broken.
type watchedFiles[T any] struct {
	paths []string
	parse func(contents [][]byte) (*T, error)

	mu      sync.Mutex
	stamps  []fileStamp
	value   *T
	lastErr error
}

type fileStamp struct {
	modTime time.Time
	size    int64
}

func (w *watchedFiles[T]) get() (*T, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	stamps := make([]fileStamp, len(w.paths))
	for i, path := range w.paths {
		info, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		stamps[i] = fileStamp{modTime: info.ModTime(), size: info.Size()}
	}
	if w.stamps != nil && equalStamps(stamps, w.stamps) {
		return w.value, w.lastErr
	}
	contents := make([][]byte, len(w.paths))
	for i, path := range w.paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		contents[i] = data
	}
	w.stamps = stamps
	w.value, w.lastErr = w.parse(contents)
	return w.value, w.lastErr
}

func equalStamps(a, b []fileStamp) bool {
	for i := range a {
		if !a[i].modTime.Equal(b[i].modTime) || a[i].size != b[i].size {
			return false
		}
	}
	return true
}
