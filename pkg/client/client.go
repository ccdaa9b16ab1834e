// Package client is a typed Go client for hubctl's HTTP API (docs/api.md): the
// admin API under /admin and the tenant API under /v1. Requests and answers
// are the pkg/hubapi types the server itself uses.
//
// A Client is safe for concurrent use, and implements hubapi.ControlPlane
// for whoever its token authenticates. Authenticate with WithToken: a
// tenant API key acts on its own tenant; the admin token acts on /admin and
// on the /v1 resources of the tenant each call names (or that WithTenant
// names, for calls that name none).
//
// Every answer outside 2xx comes back as a *Error carrying the status and
// the hub's {"code","message","details"}; a hub that could not be reached
// comes back as the transport's error, wrapped. Neither ever contains the
// token.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// HeaderTenantID names the tenant the admin token acts on in /v1.
const HeaderTenantID = "X-Tenant-Id"

// DefaultTimeout bounds a whole request of the default HTTP client: long
// enough for a verification probe (attempt timeout of at most 60s plus the
// hub's grace), short enough that an unresponsive hub does not hang a script.
const DefaultTimeout = 2 * time.Minute

// Size limits on what the client reads: a page of 1000 subscriptions is far
// below the first, and an error body is a few hundred bytes.
const (
	maxResponseBytes = 64 << 20
	maxErrorBytes    = 64 << 10
)

var _ hubapi.ControlPlane = (*Client)(nil)

// Client calls one hub.
type Client struct {
	base      *url.URL
	token     string
	tenant    string
	http      *http.Client
	userAgent string
	retries   int
}

// HeaderIdempotencyKey is sent with every POST (docs/api.md, Idempotent
// requests): a retry of the POST with the same key gets the first
// attempt's answer instead of doing the work twice.
const HeaderIdempotencyKey = "Idempotency-Key"

// DefaultRetries is how many times a POST is sent again, with its
// Idempotency-Key, after it got no answer (a connection reset, a response
// lost on the way) or the hub answered that the key's first request is
// still in progress.
const DefaultRetries = 2

// retryDelay is the pause before the first retry, doubled before each next.
var retryDelay = 200 * time.Millisecond

type idempotencyKeyContext struct{}

// WithIdempotencyKey makes the POSTs made with ctx carry key instead of one
// the client generates: a caller that retries across processes (a job
// queue, say) keeps its own key for each operation. A key names one
// request: another POST with it is refused (422 idempotency_key_reused).
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKeyContext{}, key)
}

// WithRetries sets how often a POST is sent again (DefaultRetries); 0 sends
// each once.
func WithRetries(n int) Option { return func(c *Client) { c.retries = max(n, 0) } }

// Option configures a Client.
type Option func(*Client)

// WithToken authenticates every request with Authorization: Bearer token.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithTenant sends X-Tenant-Id: id on every request, so that the admin
// token acts on that tenant's /v1 resources. A tenant key needs none.
func WithTenant(id string) Option { return func(c *Client) { c.tenant = id } }

// WithHTTPClient sends requests through hc instead of a client with
// DefaultTimeout.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// New returns a client of the hub at baseURL, an http or https URL,
// optionally with a path prefix under which the hub is served.
func New(baseURL string, opts ...Option) (*Client, error) {
	base, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("invalid hub URL %q: %w", baseURL, err)
	}
	if base.Scheme != "http" && base.Scheme != "https" || base.Host == "" {
		return nil, fmt.Errorf("invalid hub URL %q: must be http:// or https:// with a host, e.g. https://hub.example.com", baseURL)
	}
	if base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("invalid hub URL %q: must have no query or fragment", baseURL)
	}
	c := &Client{base: base, userAgent: "hubctl-go-client", retries: DefaultRetries}
	for _, opt := range opts {
		opt(c)
	}
	if c.http == nil {
		c.http = &http.Client{Timeout: DefaultTimeout}
	}
	return c, nil
}

// ForTenant returns a client like c that acts on tenant id (X-Tenant-Id).
// It shares c's connections.
func (c *Client) ForTenant(id string) *Client {
	clone := *c
	clone.tenant = id
	return &clone
}

// on is c acting on tenant, or c itself for "": the key's own tenant, or
// the one WithTenant named.
func (c *Client) on(tenant string) *Client {
	if tenant == "" {
		return c
	}
	return c.ForTenant(tenant)
}

// pageQuery is the query of a listing's page.
func pageQuery(p hubapi.ListParams) url.Values {
	q := url.Values{}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	return q
}

// Error is an answer outside 2xx. Body is the hub's error object; for an
// answer that was not one (a proxy's HTML page, say) Body.Message describes
// the answer instead and Body.Code is empty. errors.As finds both *Error and
// the *hubapi.Error inside it.
type Error struct {
	StatusCode int
	Body       hubapi.Error
	// RetryAfter is the answer's Retry-After (503, 429), zero without one.
	RetryAfter time.Duration
}

// Error is the hub's message alone: it is written for people and names
// what was wrong, and a program that branches on the outcome reads
// StatusCode and Body.Code instead.
func (e *Error) Error() string {
	switch {
	case e.Body.Message != "":
		return e.Body.Message
	case e.Body.Code != "":
		return e.Body.Code
	}
	return "the hub answered " + statusText(e.StatusCode)
}

// Unwrap exposes the hub's error object.
func (e *Error) Unwrap() error { return &e.Body }

func statusText(status int) string {
	if text := http.StatusText(status); text != "" {
		return fmt.Sprintf("HTTP %d %s", status, text)
	}
	return fmt.Sprintf("HTTP %d", status)
}

// segment escapes a path segment. An empty, "." or ".." segment would
// address another resource once the path is cleaned, so it is refused.
func segment(kind, value string) (string, error) {
	switch value {
	case "", ".", "..":
		return "", fmt.Errorf("invalid %s %q", kind, value)
	}
	return url.PathEscape(value), nil
}

// call sends a request and decodes a 2xx answer into out. path is already
// escaped. A POST carries an Idempotency-Key and is sent again under it
// when send says another attempt may get the answer.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, in, out any) error {
	u := *c.base
	u.RawPath = strings.TrimSuffix(c.base.EscapedPath(), "/") + path
	unescaped, err := url.PathUnescape(u.RawPath)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	u.Path = unescaped
	u.RawQuery = query.Encode()

	var encoded []byte
	if in != nil {
		if encoded, err = json.Marshal(in); err != nil {
			return fmt.Errorf("%s %s: encode request: %w", method, path, err)
		}
	}
	key := ""
	if method == http.MethodPost {
		if key, _ = ctx.Value(idempotencyKeyContext{}).(string); key == "" {
			key = newIdempotencyKey()
		}
	}
	delay := retryDelay
	for attempt := 0; ; attempt++ {
		retry, err := c.send(ctx, method, path, u.String(), encoded, in != nil, key, out)
		if !retry || key == "" || attempt >= c.retries || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay *= 2
	}
}

// send makes one attempt of a request. retry says whether another attempt
// may get an answer this one did not: no answer came (but not for want of
// time: the hub may still be at work, and the client's timeout is spent),
// or the hub is still doing the key's first request.
func (c *Client) send(ctx context.Context, method, path, target string, encoded []byte, hasBody bool, key string, out any) (retry bool, err error) {
	var body io.Reader
	if hasBody {
		body = bytes.NewReader(encoded)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return false, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.tenant != "" {
		req.Header.Set(HeaderTenantID, c.tenant)
	}
	if key != "" {
		req.Header.Set(HeaderIdempotencyKey, key)
	}

	resp, err := c.http.Do(req)
	if err != nil {
		var netErr net.Error
		timedOut := errors.As(err, &netErr) && netErr.Timeout()
		return !timedOut, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := responseError(resp)
		return e.StatusCode == http.StatusConflict && e.Body.Code == "idempotency_key_in_progress", e
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponseBytes)).Decode(out); err != nil {
		return false, fmt.Errorf("%s %s: decode the hub's answer (HTTP %d): %w", method, path, resp.StatusCode, err)
	}
	return false, nil
}

// newIdempotencyKey is 128 random bits, as a UUID's worth of hex.
func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// responseError reads a non-2xx answer.
func responseError(resp *http.Response) *Error {
	e := &Error{StatusCode: resp.StatusCode, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	if err == nil && json.Unmarshal(raw, &e.Body) == nil && (e.Body.Code != "" || e.Body.Message != "") {
		return e
	}
	e.Body = hubapi.Error{Message: "the hub answered " + statusText(resp.StatusCode) + describeBody(resp.Header.Get("Content-Type"), len(raw))}
	return e
}

// describeBody says what kind of body came without repeating it: a proxy's
// page is noise in an error message, and might echo request details.
func describeBody(contentType string, size int) string {
	if size == 0 {
		return " with no body"
	}
	if contentType == "" {
		contentType = "unknown type"
	}
	return " with a body that is not a hub error (" + contentType + ")"
}

// parseRetryAfter reads delay-seconds or an HTTP date (RFC 9110 §10.2.3).
func parseRetryAfter(value string, now time.Time) time.Duration {
	if value == "" {
		return 0
	}
	if seconds, err := strconv.Atoi(value); err == nil {
		if seconds < 0 {
			return 0
		}
		return time.Duration(seconds) * time.Second
	}
	if at, err := http.ParseTime(value); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}
