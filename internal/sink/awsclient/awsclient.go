// Package awsclient is the AWS plumbing the SQS, EventBridge and S3 sinks share:
// the HTTP clients their SDK clients send through, the endpoint override and
// the outbound address policy that governs it
// (STREAMING_HUB_ALLOW_PRIVATE_SINKS), the checks of regions and keys, the
// SDK configuration of one credential set with retries off (dispatch owns
// retries: one SDK call is one attempt), and the scrubbing of credentials
// from what a sink records.
package awsclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
)

const (
	// MaxEndpointLength bounds an endpoint override; real ones are far
	// shorter.
	MaxEndpointLength = 2048
	// MaxKeyLength bounds an access key id or secret. AWS key ids are at
	// most 128 characters and secrets 40; compatible services are allowed
	// more room, not unlimited room.
	MaxKeyLength = 256
	// maxRegionLength is a DNS label's: the SDK builds the endpoint host
	// <service>.<region>.amazonaws.com from the region.
	maxRegionLength = 63
	// masked replaces a credential in recorded text.
	masked = "****"
)

// Options are what every sink of one AWS sink type shares.
type Options struct {
	// AllowPrivate lets requests reach loopback, private and reserved
	// addresses (STREAMING_HUB_ALLOW_PRIVATE_SINKS).
	AllowPrivate bool
	// Resolver answers host lookups at dial time; nil means the system's.
	Resolver netguard.Resolver
	// Dial connects to one already-checked address; nil means a
	// net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Clients are the HTTP clients of one sink type: one for AWS's regional
// endpoints and one for endpoint overrides, each with a connection pool
// that every sink of the type shares. They are safe for concurrent use.
type Clients struct {
	allowPrivate bool
	regional     *http.Client
	override     *http.Client
}

// NewClients builds the HTTP clients of one sink type.
func NewClients(opts Options) *Clients {
	guard := &netguard.Dialer{AllowPrivate: opts.AllowPrivate, Resolver: opts.Resolver, Dial: opts.Dial}
	// Endpoint overrides are the tenant's choice: they go through the
	// address policy, and never through a proxy, which would make the
	// connection itself, out of the policy's sight. AWS's own regional
	// endpoints are reached as the SDK reaches them by default, through
	// the system dialer and the environment's proxy: their host comes from
	// a validated region, and a VPC interface endpoint legitimately
	// resolves it to a private address.
	override := newHTTPClient(nil, guard.DialContext)
	var system net.Dialer
	regional := newHTTPClient(http.ProxyFromEnvironment, system.DialContext)
	return &Clients{allowPrivate: opts.AllowPrivate, regional: regional, override: override}
}

func newHTTPClient(proxy func(*http.Request) (*url.URL, error), dial func(context.Context, string, string) (net.Conn, error)) *http.Client {
	return &http.Client{
		Transport: sink.NewTransport(sink.TransportOptions{Dial: dial, Proxy: proxy}),
		// AWS never redirects; following one would carry a signed request
		// to a host nobody configured.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// For is the client that reaches endpoint: the override client for an
// endpoint override, the regional one for "" (AWS's own endpoint).
func (c *Clients) For(endpoint string) *http.Client {
	if endpoint != "" {
		return c.override
	}
	return c.regional
}

// CloseIdleConnections closes the kept-alive connections of every sink
// using these clients; call it at shutdown.
func (c *Clients) CloseIdleConnections() {
	c.regional.CloseIdleConnections()
	c.override.CloseIdleConnections()
}

// CheckEndpoint judges an endpoint override by the clients' address policy.
func (c *Clients) CheckEndpoint(endpoint string) error {
	return CheckEndpoint(endpoint, c.allowPrivate)
}

// Config is the SDK configuration of one credential set in one region,
// sent to endpoint ("" for AWS's own), with retries off. Build a service
// client from it with the service's NewFromConfig.
func (c *Clients) Config(region, endpoint string, creds Credentials) aws.Config {
	cfg := aws.Config{
		Region:      region,
		Credentials: credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, ""),
		HTTPClient:  c.For(endpoint),
		Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
	}
	if endpoint != "" {
		cfg.BaseEndpoint = aws.String(endpoint)
	}
	return cfg
}

// Credentials are a sink's access key, as stored encrypted in
// Config.Credentials. The key id is kept with the secret: alone it names
// the AWS account's user, which is nobody's business who can read the
// subscription.
type Credentials struct {
	AccessKeyID     string `json:"access_key_id"`
	SecretAccessKey string `json:"secret_access_key"`
}

// Scrub masks the credentials wherever they appear in text: a service, or
// one posing as it, may quote the key id, or worse, in what it answers. The
// secret goes first, so a key id inside it cannot leave part of it behind.
func (c Credentials) Scrub(text string) string {
	for _, secret := range []string{c.SecretAccessKey, c.AccessKeyID} {
		if secret != "" {
			text = strings.ReplaceAll(text, secret, masked)
		}
	}
	return text
}

// CheckEndpoint accepts an http(s) base URL. A literal IP address must also
// pass the address policy unless private sinks are allowed, so an
// obviously unreachable endpoint is refused when it is configured; host
// names are judged at dial time.
func CheckEndpoint(endpoint string, allowPrivate bool) error {
	_, err := netguard.CheckTarget(endpoint, netguard.TargetRules{MaxLength: MaxEndpointLength, BaseOnly: true, AllowPrivate: allowPrivate})
	return err
}

// CheckRegion accepts a DNS label of lowercase letters, digits and
// hyphens: the SDK builds the endpoint host from the region and signs every
// request for it, so a region that is not a label could steer signed
// requests to a host nobody configured.
func CheckRegion(region string) error {
	if region == "" {
		return errors.New("is required")
	}
	if len(region) > maxRegionLength {
		return fmt.Errorf("must be at most %d characters", maxRegionLength)
	}
	for i := range len(region) {
		c := region[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return errors.New("must be an AWS region such as us-east-1 (lowercase letters, digits and hyphens)")
		}
	}
	if region[0] == '-' || region[len(region)-1] == '-' {
		return errors.New("must not start or end with a hyphen")
	}
	return nil
}

// CheckKey accepts what can travel in a SigV4 Authorization header and be
// an HMAC key: at most MaxKeyLength characters of printable ASCII without
// spaces. A pasted key most often goes wrong by a trailing newline or
// space. Its errors never quote the key.
func CheckKey(key string) error {
	if len(key) > MaxKeyLength {
		return fmt.Errorf("must be at most %d characters", MaxKeyLength)
	}
	for i := range len(key) {
		if key[i] < 0x21 || key[i] > 0x7e {
			return errors.New("must be printable ASCII without spaces")
		}
	}
	return nil
}
