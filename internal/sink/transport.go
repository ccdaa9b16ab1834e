package sink

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/url"
	"time"
)

// TransportOptions are what a sink type decides for itself about how its
// HTTP transport reaches destinations.
type TransportOptions struct {
	// Dial connects to a destination; it is the transport's DialContext.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Proxy picks the proxy of a request; nil means none.
	Proxy func(*http.Request) (*url.URL, error)
	// RootCAs verifies destinations' certificates; nil means the system
	// pool.
	RootCAs *x509.CertPool
}

// NewTransport builds the outbound HTTP transport of a sink type, meant to
// be shared by every sink of the type.
func NewTransport(opts TransportOptions) *http.Transport {
	return &http.Transport{
		Proxy:       opts.Proxy,
		DialContext: opts.Dial,
		TLSClientConfig: &tls.Config{
			MinVersion: tls.VersionTLS12,
			RootCAs:    opts.RootCAs,
		},
		// A custom dialer and TLS configuration turn HTTP/2 off unless
		// asked for; destinations that speak it multiplex deliveries.
		ForceAttemptHTTP2: true,
		// Backstops only: the attempt's own deadline, never longer, is the
		// one that fires.
		TLSHandshakeTimeout:   MaxAttemptTimeout,
		ResponseHeaderTimeout: MaxAttemptTimeout,
		// The workers of all subscriptions of a busy destination share its
		// idle connections; the net/http default of 2 per host would make
		// most deliveries open a new one.
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		// What a destination answers is recorded for MaxResponseBytes at
		// most; its headers need no more room than this.
		MaxResponseHeaderBytes: 64 << 10,
	}
}
