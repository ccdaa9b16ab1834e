// Package certfile reads TLS material from files and reads it again when
// the files change, so a certificate renewed on disk (cert-manager, a
// secret store's agent) is used from the next connection without a
// restart.
package certfile

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"sync"
	"time"
)

// KeyPair is a certificate and its key, from two PEM files.
func KeyPair(certFile, keyFile string) *Watched[tls.Certificate] {
	return &Watched[tls.Certificate]{paths: []string{certFile, keyFile}, parse: parseKeyPair}
}

// Pool is the authorities of a PEM bundle.
func Pool(file string) *Watched[x509.CertPool] {
	return &Watched[x509.CertPool]{paths: []string{file}, parse: parsePool}
}

// Watched is the value parsed from some files, parsed again when any of
// them changes (its inode, modification time or size; a stat per call,
// which is nothing beside a TLS handshake). Files that no longer parse give their
// error until they are fixed: going on with the stale value would hide
// that they are broken, and a renewal that writes the certificate and the
// key one after the other is read again once both are in place.
type Watched[T any] struct {
	paths []string
	parse func(contents [][]byte) (*T, error)

	mu     sync.Mutex
	stamps []stamp
	value  *T
	err    error
}

type stamp struct {
	id      uint64
	modTime time.Time
	size    int64
}

// Get is the value of the files as they are now.
func (w *Watched[T]) Get() (*T, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	stamps := make([]stamp, len(w.paths))
	for i, path := range w.paths {
		info, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		stamps[i] = stamp{id: fileID(info), modTime: info.ModTime(), size: info.Size()}
	}
	if w.stamps != nil && equal(stamps, w.stamps) {
		return w.value, w.err
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
	w.value, w.err = w.parse(contents)
	return w.value, w.err
}

func equal(a, b []stamp) bool {
	for i := range a {
		if a[i].id != b[i].id || !a[i].modTime.Equal(b[i].modTime) || a[i].size != b[i].size {
			return false
		}
	}
	return true
}

func parseKeyPair(contents [][]byte) (*tls.Certificate, error) {
	cert, err := tls.X509KeyPair(contents[0], contents[1])
	if err != nil {
		return nil, err
	}
	return &cert, nil
}

func parsePool(contents [][]byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(contents[0]) {
		return nil, errors.New("no PEM certificate in the file")
	}
	return pool, nil
}
