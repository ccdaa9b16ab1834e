// Package listen implements `hubctl listen`: a local webhook receiver for
// developers. It verifies every delivery with pkg/webhook, prints one line
// (or one JSON object) per request, flags redeliveries of an event, and can
// fail on purpose so retries, the circuit breaker and auto-disable can be
// watched at work.
package listen

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/webhook"
)

// DefaultAddr is the listen address: port 9000 on loopback only, since a
// receiver a developer starts on a laptop should not answer the café's
// network. --addr :9000 listens on every interface.
const DefaultAddr = "127.0.0.1:9000"

// Output formats.
const (
	formatText = "text"
	formatJSON = "json"
)

// maxBodyBytes is what the receiver reads of a body: above any event the
// hub accepts with its defaults (1 MiB), so nothing real is cut.
const maxBodyBytes = 16 << 20

// maxRemembered bounds the event ids kept for duplicate detection, so a
// receiver left running for days does not grow without end; the oldest
// are forgotten first.
const maxRemembered = 100_000

// shutdownGrace is how long requests in flight get after Ctrl-C.
const shutdownGrace = 5 * time.Second

type options struct {
	addr     string
	secrets  []string
	failRate float64
	status   int
	format   string
	scheme   string
	jq       string
	// filter is --jq compiled; it makes the output JSON.
	filter iostreams.JSONFilter
}

// NewCmd returns `hubctl listen`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var opts options
	cmd := &cobra.Command{
		Use:   "listen [--addr 127.0.0.1:9000] --secret S [--secret S2] [--fail-rate 0.2] [--status 500] [-o json] [--jq EXPR]",
		Short: "Run a local webhook receiver that verifies and prints deliveries",
		Long: `Run a webhook receiver on --addr that verifies every request against the
given secrets (two during a rotation) and prints one line per request: the
time, event type, X-Lerian-Event-Id, X-Lerian-Delivery-Id and the verdict,
ok or the reason it failed (stale_timestamp, future_timestamp,
signature_mismatch, malformed_signature). A redelivery of an event already
seen is marked "duplicate": a retry keeps the event id and gets a new
delivery id. -o json prints one JSON object per request instead, with the
headers of interest and the body (as JSON when it is, else base64); --jq
filters that object per request (strings print bare).

Verified requests are answered 200, failed ones 401 with the reason. The
hub's verification probes (hub.verification) are answered 200 once they
verify, so a subscription pointing here becomes active. --fail-rate answers
that share of verified deliveries (0 to 1) with --status instead, to watch
retries, the breaker and auto-disable. --scheme standard-webhooks verifies
webhook-id, webhook-timestamp and webhook-signature instead, with whsec_
secrets. Ctrl-C stops it.`,
		Example: `  hubctl listen --secret "$SECRET"
  hubctl subs create --name local --type webhook --url http://127.0.0.1:9000 --event-types '*' --signing-secret "$SECRET"
  hubctl listen --secret "$SECRET" --fail-rate 1 --status 503 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.check(); err != nil {
				return err
			}
			if err := opts.compileJQ(cmd.Flags().Changed("output")); err != nil {
				return err
			}
			return run(cmd.Context(), f, opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.addr, "addr", DefaultAddr, "address to listen on (:9000 for every interface)")
	fs.StringArrayVar(&opts.secrets, "secret", nil, "signing secret to accept (repeatable)")
	fs.Float64Var(&opts.failRate, "fail-rate", 0, "share of verified deliveries to fail on purpose, 0 to 1")
	fs.IntVar(&opts.status, "status", http.StatusInternalServerError, "status of a simulated failure")
	fs.StringVar(&opts.scheme, "scheme", webhook.SchemeLerian, `signature scheme of the subscription: "lerian" or "standard-webhooks"`)
	fs.StringVarP(&opts.format, "output", "o", formatText, "output: text (a line per request) or json (an object per line)")
	fs.StringVar(&opts.jq, "jq", "", "filter each request's JSON object with a jq expression (implies -o json), e.g. '.body.data'")
	return cmd
}

func (o options) check() error {
	if len(o.secrets) == 0 {
		return cmdutil.UsageErrorf("--secret is required: the signing secret of the subscription (subs create --signing-secret, or the one it printed)")
	}
	for _, s := range o.secrets {
		if s == "" {
			return cmdutil.UsageErrorf("--secret is empty: an empty key would let anyone sign")
		}
	}
	switch o.scheme {
	case "", webhook.SchemeLerian: // "" is the zero options: the default
	case webhook.SchemeStandardWebhooks:
		for n, s := range o.secrets {
			if _, err := webhook.DecodeStandardSecret(s); err != nil {
				return cmdutil.UsageErrorf("--secret #%d: %v", n+1, err)
			}
		}
	default:
		return cmdutil.UsageErrorf("invalid --scheme %q: want %s or %s", o.scheme, webhook.SchemeLerian, webhook.SchemeStandardWebhooks)
	}
	if !(o.failRate >= 0 && o.failRate <= 1) { // also refuses NaN
		return cmdutil.UsageErrorf("invalid --fail-rate %v: must be between 0 and 1", o.failRate)
	}
	if o.status < 100 || o.status > 599 {
		return cmdutil.UsageErrorf("invalid --status %d: must be an HTTP status (100-599)", o.status)
	}
	if o.format != formatText && o.format != formatJSON {
		return cmdutil.UsageErrorf("invalid -o %q: use text or json", o.format)
	}
	return nil
}

// compileJQ compiles --jq, which filters the -o json object of each
// request and so conflicts with -o text given explicitly.
func (o *options) compileJQ(outputChanged bool) error {
	if o.jq == "" {
		return nil
	}
	if outputChanged && o.format != formatJSON {
		return cmdutil.UsageErrorf("--jq filters JSON: it cannot be combined with -o %s", o.format)
	}
	q, err := output.ParseJQ(o.jq)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	o.format, o.filter = formatJSON, q
	return nil
}

func run(ctx context.Context, f *cmdutil.Factory, opts options) error {
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitUnavailable, fmt.Errorf("listen on %s: %w", opts.addr, err))
	}
	rcv := newReceiver(opts, f.IOStreams.Out, time.Now, rand.Float64)
	server := &http.Server{Handler: rcv, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(f.IOStreams.ErrOut, "Listening on http://%s (verifying with %d secret(s)); Ctrl-C stops.\n", ln.Addr(), len(opts.secrets))

	served := make(chan error, 1)
	go func() { served <- server.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := server.Shutdown(stopCtx); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// receiver is the HTTP handler: verify, decide the answer, print.
type receiver struct {
	opts   options
	now    func() time.Time
	chance func() float64 // uniform in [0, 1)

	// observe, when set, gets every request instead of out: the
	// receiver of another command (NewVerifier).
	observe func(d Delivery, body []byte)

	mu   sync.Mutex // serialises out and the memory of events
	out  io.Writer
	seen map[string]struct{}
	fifo []string
}

func newReceiver(opts options, out io.Writer, now func() time.Time, chance func() float64) *receiver {
	return &receiver{opts: opts, out: out, now: now, chance: chance, seen: map[string]struct{}{}}
}

// NewVerifier is listen's receiver for other commands (hubctl bench): it
// verifies every request against secrets with the Lerian scheme, answers
// as listen does (200, or 401 with the reason, verification probes
// included), and hands each request to observe instead of printing it.
// observe runs on the request's goroutine, after duplicate detection.
func NewVerifier(secrets []string, now func() time.Time, observe func(d Delivery, body []byte)) http.Handler {
	rc := newReceiver(options{secrets: secrets, scheme: webhook.SchemeLerian}, io.Discard, now, rand.Float64)
	rc.observe = observe
	return rc
}

// Delivery is what the receiver reports about one request; -o json
// prints it as it is.
type Delivery struct {
	Time       time.Time         `json:"time"`
	Method     string            `json:"method"`
	Path       string            `json:"path"`
	EventType  string            `json:"event_type"`
	EventID    string            `json:"event_id"`
	DeliveryID string            `json:"delivery_id"`
	Verdict    string            `json:"verdict"` // "ok" or a webhook.Reason
	Duplicate  bool              `json:"duplicate"`
	Status     int               `json:"status"` // what the receiver answered
	Simulated  bool              `json:"simulated_failure,omitempty"`
	Headers    map[string]string `json:"headers"`
	Body       json.RawMessage   `json:"body,omitempty"`
	BodyBase64 string            `json:"body_base64,omitempty"`
}

// headersOfInterest are shown with -o json: the hub's own and what
// describes the body.
var headersOfInterest = []string{
	"Content-Type", "User-Agent", webhook.HeaderTimestamp, webhook.HeaderSignature,
	webhook.HeaderEventID, webhook.HeaderEventType, webhook.HeaderTenantID,
	webhook.HeaderDeliveryID, webhook.HeaderSchemaVersion, "Traceparent", "Tracestate",
	webhook.HeaderWebhookID, webhook.HeaderWebhookTimestamp, webhook.HeaderWebhookSignature,
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusRequestEntityTooLarge)
		return
	}
	d := Delivery{
		Time:       rc.now().UTC(),
		Method:     r.Method,
		Path:       r.URL.Path,
		EventType:  r.Header.Get(webhook.HeaderEventType),
		EventID:    r.Header.Get(webhook.HeaderEventID),
		DeliveryID: r.Header.Get(webhook.HeaderDeliveryID),
		Verdict:    "ok",
		Status:     http.StatusOK,
		Headers:    map[string]string{},
	}
	for _, name := range headersOfInterest {
		if values := r.Header.Values(name); len(values) > 0 {
			d.Headers[name] = strings.Join(values, ", ")
		}
	}
	if json.Valid(body) {
		d.Body = body
	} else if len(body) > 0 {
		d.BodyBase64 = base64.StdEncoding.EncodeToString(body)
	}

	verify := webhook.VerifyRequest
	if rc.opts.scheme == webhook.SchemeStandardWebhooks {
		verify = webhook.VerifyStandardRequest
	}
	verr := verify(r, body, rc.opts.secrets, d.Time, webhook.DefaultTolerance)
	var reason *webhook.VerifyError
	switch {
	case errors.As(verr, &reason):
		d.Verdict, d.Status = string(reason.Reason), http.StatusUnauthorized
	case verr != nil: // no usable secret: check() makes it unreachable
		d.Verdict, d.Status = verr.Error(), http.StatusInternalServerError
	case d.EventType != webhook.VerificationEventType && rc.opts.failRate > 0 && rc.chance() < rc.opts.failRate:
		d.Status, d.Simulated = rc.opts.status, true
	}

	rc.mu.Lock()
	if verr == nil && d.EventType != webhook.VerificationEventType && d.EventID != "" {
		d.Duplicate = rc.remember(d.EventID)
	}
	if rc.observe == nil {
		rc.print(d)
	}
	rc.mu.Unlock()
	if rc.observe != nil {
		rc.observe(d, body)
	}

	if d.Status == http.StatusOK {
		w.WriteHeader(http.StatusOK)
		return
	}
	answer := d.Verdict
	if d.Simulated {
		answer = "simulated failure (hubctl listen --fail-rate)"
	}
	http.Error(w, answer, d.Status)
}

// remember records an event id and reports whether it was seen before.
// The caller holds mu.
func (rc *receiver) remember(id string) (duplicate bool) {
	if _, ok := rc.seen[id]; ok {
		return true
	}
	if len(rc.fifo) >= maxRemembered {
		delete(rc.seen, rc.fifo[0])
		rc.fifo = rc.fifo[1:]
	}
	rc.seen[id] = struct{}{}
	rc.fifo = append(rc.fifo, id)
	return false
}

// print writes one line; the caller holds mu, so lines never interleave.
func (rc *receiver) print(d Delivery) {
	if rc.opts.filter != nil {
		if err := rc.opts.filter.Write(rc.out, d); err != nil {
			// A filter failing on one request (e.g. .body.x on a
			// non-object) must not stop the receiver: say so in its place.
			fmt.Fprintf(rc.out, "%s\n", err)
		}
		return
	}
	if rc.opts.format == formatJSON {
		line, err := json.Marshal(d)
		if err == nil {
			fmt.Fprintf(rc.out, "%s\n", line)
		}
		return
	}
	fmt.Fprintln(rc.out, textLine(d))
}

// textLine is "<time> <type> event=<id> delivery=<id> <verdict>[ duplicate][ -> <status>]".
func textLine(d Delivery) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s event=%s delivery=%s %s", d.Time.Format(time.RFC3339), orDash(d.EventType),
		orDash(d.EventID), orDash(d.DeliveryID), d.Verdict)
	if d.EventType == webhook.VerificationEventType {
		b.WriteString(" (verification probe)")
	}
	if d.Duplicate {
		b.WriteString(" duplicate")
	}
	if d.Simulated {
		fmt.Fprintf(&b, " -> %d (simulated failure)", d.Status)
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	// A header value is the sender's text: keep it on one line.
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
