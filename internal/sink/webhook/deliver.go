package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
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
	"unicode"

	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"github.com/hubctl/hubctl/internal/clip"
	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

const (
	// maxDrainBytes is how much of a response beyond the recorded snippet
	// is read and thrown away so its connection can serve the next
	// delivery; a longer answer costs its connection instead.
	maxDrainBytes = 64 << 10
	// maxRetryAfter caps a receiver's Retry-After (docs/concepts.md, Retries).
	maxRetryAfter = 10 * time.Hour
	// maxErrorBytes keeps recorded transport errors short.
	maxErrorBytes = 200
	// maxProbeSnippetBytes is how much of a refusing receiver's answer a
	// probe error quotes: enough for "signature_mismatch" or a short reason.
	maxProbeSnippetBytes = 200
	// probeSchemaVersion versions the verification message itself, which
	// is the hub's own document rather than any event's.
	probeSchemaVersion = "1"
)

// hookSink is one subscription's webhook.
type hookSink struct {
	typ *Type
	// client is the Type's shared one, or one with this sink's own CA or
	// client certificate.
	client *http.Client
	url    string
	// lerian sign X-Webhook-Signature, standard webhook-signature; each
	// newest first. Both have secrets only during the overlap of a switch
	// of scheme. The X-Lerian-* headers are sent either way.
	lerian, standard []string
	// headers are the subscription's own (sink.headers), none of them one
	// the hub sets; authorization is sink.auth's header value, "" for none.
	headers       map[string]string
	authorization string
	// tokens supplies the bearer token of oauth2_client_credentials auth.
	tokens *tokenCache
}

// Deliver makes one POST (docs/consuming.md, What a delivery looks like) within d.Timeout and reports it. Only
// a 2xx is a success; a 3xx is a failure, not followed. net/http resends a
// POST only when a kept-alive connection died before any of it was written,
// so the receiver still sees at most one request per attempt.
func (s *hookSink) Deliver(ctx context.Context, d sink.Delivery) sink.Outcome {
	timeout := sink.AttemptTimeout(d.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	resp, token, out, ok := s.send(ctx, d, timeout)
	if !ok {
		return out
	}
	if resp.StatusCode == http.StatusUnauthorized && token != nil {
		// The receiver refused a token the hub thought valid (revoked,
		// rotated keys): one more request of this attempt with a fresh
		// one, as SPEC §4 says; a second 401 is the answer.
		_, _ = io.CopyN(io.Discard, resp.Body, maxDrainBytes)
		resp.Body.Close()
		s.tokens.refused(token)
		if resp, _, out, ok = s.send(ctx, d, timeout); !ok {
			return out
		}
	}
	defer resp.Body.Close()
	return readOutcome(resp, s.typ.now())
}

// send makes one request of an attempt. ok is false when there is no
// response to read, out then saying why.
func (s *hookSink) send(ctx context.Context, d sink.Delivery, timeout time.Duration) (resp *http.Response, token *oauth2.Token, out sink.Outcome, ok bool) {
	req, err := s.newRequest(ctx, d)
	if err != nil {
		return nil, nil, sink.Outcome{Error: "cannot build the request: " + clip.String(err.Error(), maxErrorBytes), NotSent: true}, false
	}
	if s.tokens != nil {
		if token, err = s.tokens.get(ctx); err != nil {
			// The endpoint's side of the integration failed: the breaker
			// hears of it like any failed attempt.
			return nil, nil, sink.Outcome{Error: "oauth2 token: " + describeError(ctx, err, timeout)}, false
		}
		req.Header.Set("Authorization", "Bearer "+token.AccessToken)
	}
	resp, err = s.client.Do(req)
	if err != nil {
		return nil, nil, sink.Outcome{Error: describeError(ctx, err, timeout)}, false
	}
	return resp, token, sink.Outcome{}, true
}

// newRequest builds the signed request. The timestamp is taken here, per
// attempt, so a retry is never signed with a stale one.
func (s *hookSink) newRequest(ctx context.Context, d sink.Delivery) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(d.Payload))
	if err != nil {
		// http.NewRequest errors quote the URL, whose query may hold a token.
		return nil, errors.New("the stored url is not usable")
	}
	contentType := d.ContentType()
	h := req.Header
	for name, value := range s.headers {
		h.Set(name, value)
	}
	if s.authorization != "" {
		h.Set("Authorization", s.authorization)
	}
	h.Set("Content-Type", contentType)
	h.Set("User-Agent", s.typ.userAgent)
	h.Set(whsign.HeaderEventID, d.EventID)
	h.Set(whsign.HeaderEventType, d.EventKey)
	h.Set(whsign.HeaderTenantID, d.TenantID)
	h.Set(whsign.HeaderDeliveryID, d.DeliveryID)
	h.Set(whsign.HeaderSchemaVersion, d.SchemaVersion)
	// Written as the W3C Trace Context spells them; HTTP/1 sends map keys
	// as stored.
	if d.TraceParent != "" {
		h["traceparent"] = []string{d.TraceParent}
	}
	if d.TraceState != "" {
		h["tracestate"] = []string{d.TraceState}
	}
	now := s.typ.now().Unix()
	if len(s.standard) > 0 {
		// The event id is the message id: stable across attempts, so a
		// receiver deduplicating on webhook-id sees a retry as one message.
		if err := whsign.SignStandardHeader(h, s.standard, d.EventID, now, d.Payload); err != nil {
			return nil, errors.New("a signing secret is not a standard-webhooks secret")
		}
	}
	if len(s.lerian) > 0 {
		whsign.SignHeader(h, s.lerian, now, d.Payload)
	}
	return req, nil
}

// verificationMessage is the body of a probe (docs/concepts.md, Verification).
type verificationMessage struct {
	Type           string `json:"type"`
	SubscriptionID string `json:"subscription_id"`
	Challenge      string `json:"challenge"`
}

// Probe sends the verification message, signed and headed like a delivery
// with X-Lerian-Event-Type: hub.verification, and succeeds on a 2xx within
// p.Timeout. Its error is what the tenant sees as verification_error: the
// failure and the start of the receiver's answer, if it gave one.
func (s *hookSink) Probe(ctx context.Context, p sink.ProbeRequest) error {
	body, err := json.Marshal(verificationMessage{
		Type:           whsign.VerificationEventType,
		SubscriptionID: p.SubscriptionID,
		Challenge:      rand.Text(),
	})
	if err != nil {
		return fmt.Errorf("verification probe: %w", err)
	}
	eventID, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("verification probe: %w", err)
	}
	deliveryID, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("verification probe: %w", err)
	}
	out := s.Deliver(ctx, sink.Delivery{
		DeliveryID:      deliveryID.String(),
		EventID:         eventID.String(),
		EventKey:        whsign.VerificationEventType,
		TenantID:        p.TenantID,
		SchemaVersion:   probeSchemaVersion,
		DataContentType: "application/json",
		Payload:         body,
		Timeout:         p.Timeout,
	})
	if out.OK {
		return nil
	}
	if quoted := printable(out.Response, maxProbeSnippetBytes); quoted != "" {
		return errors.New(out.Error + ": " + quoted)
	}
	return errors.New(out.Error)
}

// Close does nothing: connections belong to the Type, shared by all sinks.
func (s *hookSink) Close() error { return nil }

// readOutcome records the answer and leaves the connection reusable.
func readOutcome(resp *http.Response, now time.Time) sink.Outcome {
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, sink.MaxResponseBytes))
	// The status already decides the outcome; a body that stops early or
	// overruns the drain only costs this connection.
	_, _ = io.CopyN(io.Discard, resp.Body, maxDrainBytes)
	if len(snippet) == 0 {
		snippet = nil
	}
	out := sink.Outcome{StatusCode: resp.StatusCode, Response: snippet}
	status := strings.TrimSpace("HTTP " + strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		out.OK = true
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		out.Error = status + ": redirects are not followed"
	default:
		out.Error = status
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		out.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), now)
	}
	return out
}

// parseRetryAfter reads a Retry-After value, delay-seconds or an HTTP date
// (RFC 9110 §10.2.3), as a wait from now capped at maxRetryAfter. Anything
// else, or a time already past, is no request to wait.
func parseRetryAfter(value string, now time.Time) time.Duration {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0
	}
	if strings.TrimLeft(value, "0123456789") == "" {
		seconds, err := strconv.ParseUint(value, 10, 64)
		// Digits only, so the one possible error is a value too large.
		if err != nil || seconds > uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(seconds) * time.Second
	}
	when, err := http.ParseTime(value)
	if err != nil {
		return 0
	}
	return min(max(when.Sub(now), 0), maxRetryAfter)
}

// describeError turns a failed round trip into a short reason. It strips
// the *url.Error wrapper, whose message quotes the full URL and so perhaps
// a token in its query; what is left names hosts and addresses at most.
func describeError(attemptCtx context.Context, err error, timeout time.Duration) string {
	if urlErr, ok := errors.AsType[*url.Error](err); ok {
		err = urlErr.Err
	}
	if refused, ok := errors.AsType[*netguard.RefusedError](err); ok {
		return "destination refused: " + refused.Error()
	}
	if errors.Is(attemptCtx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("no response within %s", timeout)
	}
	if netErr, ok := errors.AsType[net.Error](err); ok && netErr.Timeout() {
		return fmt.Sprintf("no response within %s", timeout)
	}
	if errors.Is(err, context.Canceled) {
		return "attempt cancelled"
	}
	return clip.String(err.Error(), maxErrorBytes)
}

// printable renders a receiver's answer for an error message: valid UTF-8,
// no control characters, whitespace collapsed, at most limit bytes.
func printable(b []byte, limit int) string {
	s := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(string(b), "\uFFFD"))
	return clip.String(strings.Join(strings.Fields(s), " "), limit)
}
