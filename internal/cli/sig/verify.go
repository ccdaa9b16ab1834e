package sig

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"os"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/pkg/webhook"
)

// VerifyOptions is `hubctl sig verify` parsed: the signature headers
// gathered from the flags and --headers-file, checked for presence.
type VerifyOptions struct {
	Factory    *cmdutil.Factory
	Secrets    []string
	Timestamp  string
	Signatures []string
	BodyFile   string
	Tolerance  time.Duration
	// Now is the receiver's clock: time.Now unless the hidden --now says.
	Now time.Time
	// Scheme is lerian unless --scheme says; ID is the standard-webhooks
	// webhook-id.
	Scheme signatureScheme
	ID     string
}

// NewCmdVerify returns `hubctl sig verify`; a non-nil runF replaces the
// real run.
func NewCmdVerify(f *cmdutil.Factory, runF func(*VerifyOptions) error) *cobra.Command {
	var (
		secrets, signatures   []string
		timestamp             string
		bodyFile, headersFile string
		tolerance             time.Duration
		now                   int64
		schemeName, id        string
	)
	cmd := &cobra.Command{
		Use:   "verify --secret S [--secret S2] --timestamp T --signature V [--signature V2] (--body-file F | stdin) [--tolerance 5m]",
		Short: "Check a delivery's signature (exit 0 ok, 1 not)",
		Long: `Check a webhook delivery. Exits 0 when any --signature matches any --secret
and --timestamp is within --tolerance of now; otherwise exits 1 with one line
on stderr that starts with the reason: stale_timestamp, future_timestamp,
signature_mismatch or malformed_signature (a timestamp that is not Unix
seconds, or no value of the form v1,sha256=<64 hex digits>).

Signature values may be repeated or joined with ", " as an intermediary
folds them. --headers-file reads a raw HTTP header block (a captured
request's headers, optionally with its request line) for
X-Webhook-Timestamp and every X-Webhook-Signature line; --timestamp
overrides its timestamp and --signature adds to its signatures. The body is
read from --body-file, or standard input. Comparison is constant-time.

--scheme standard-webhooks checks webhook-signature values ("v1," + base64,
space-separated) over --id (webhook-id), --timestamp and the body, with
secrets of the form whsec_ + base64; --headers-file then reads webhook-id,
webhook-timestamp and webhook-signature.`,
		Example: `  hubctl sig verify --secret "$SECRET" --timestamp 1767225600 \
    --signature 'v1,sha256=6816b01b...' --body-file body.json
  hubctl sig verify --secret "$NEW" --secret "$OLD" --headers-file request-headers.txt --body-file body.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireSecrets(secrets); err != nil {
				return err
			}
			if tolerance <= 0 {
				return cmdutil.UsageErrorf("invalid --tolerance %s: must be positive", tolerance)
			}
			scheme, err := parseScheme(schemeName, id, secrets)
			if err != nil {
				return err
			}
			opts := &VerifyOptions{Factory: f, Secrets: secrets, Timestamp: timestamp, Signatures: signatures,
				BodyFile: bodyFile, Tolerance: tolerance, Now: time.Now(), Scheme: scheme, ID: id}
			if cmd.Flags().Changed("now") {
				opts.Now = time.Unix(now, 0)
			}
			tsGiven := cmd.Flags().Changed("timestamp")
			if headersFile != "" {
				raw, err := os.ReadFile(headersFile)
				if err != nil {
					return cmdutil.UsageErrorf("read --headers-file: %v", err)
				}
				header, err := parseHeaderBlock(raw)
				if err != nil {
					return cmdutil.UsageErrorf("--headers-file %s: %v", headersFile, err)
				}
				if !tsGiven {
					lines := header.Values(scheme.TimestampHeader)
					tsGiven = len(lines) > 0
					// Several timestamp lines are as malformed as none: which
					// one was signed is unknown (as webhook.VerifyRequest rules).
					if len(lines) == 1 {
						opts.Timestamp = lines[0]
					}
				}
				opts.Signatures = append(header.Values(scheme.SignatureHeader), signatures...)
				if opts.ID == "" {
					opts.ID = header.Get(webhook.HeaderWebhookID)
				}
			}
			if scheme.Name == webhook.SchemeStandardWebhooks && opts.ID == "" {
				return cmdutil.UsageErrorf("no message id: pass --id or a --headers-file with %s", webhook.HeaderWebhookID)
			}
			if !tsGiven {
				return cmdutil.UsageErrorf("no timestamp: pass --timestamp or a --headers-file with %s", scheme.TimestampHeader)
			}
			if len(opts.Signatures) == 0 {
				return cmdutil.UsageErrorf("no signature: pass --signature or a --headers-file with %s", scheme.SignatureHeader)
			}
			return cmdutil.Run(cmd.Context(), opts, runF, verifyRun)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&secrets, "secret", nil, "accepted signing secret (repeatable, e.g. both during a rotation)")
	fs.StringVar(&timestamp, "timestamp", "", "the X-Webhook-Timestamp value")
	fs.StringArrayVar(&signatures, "signature", nil, "an X-Webhook-Signature value (repeatable)")
	fs.StringVar(&bodyFile, "body-file", "", "file holding the raw body (default: standard input)")
	fs.StringVar(&headersFile, "headers-file", "", "file holding a raw HTTP header block with the signature headers")
	fs.StringVar(&schemeName, "scheme", webhook.SchemeLerian, schemeUsage)
	fs.StringVar(&id, "id", "", "the webhook-id value (standard-webhooks only)")
	fs.DurationVar(&tolerance, "tolerance", webhook.DefaultTolerance, "how far the timestamp may be from now, either way")
	// A testing aid: conformance vectors carry the receiver's clock. Hidden,
	// because a script that set it would defeat the replay protection.
	fs.Int64Var(&now, "now", 0, "verify as if the clock read these Unix seconds (testing aid)")
	_ = fs.MarkHidden("now")
	return cmd
}

func verifyRun(_ context.Context, opts *VerifyOptions) error {
	body, err := readBody(opts.Factory, opts.BodyFile)
	if err != nil {
		return err
	}
	if opts.Scheme.Name == webhook.SchemeStandardWebhooks {
		err = webhook.VerifyStandard(opts.Secrets, opts.ID, opts.Timestamp, opts.Signatures, body, opts.Now, opts.Tolerance)
	} else {
		err = webhook.Verify(opts.Secrets, opts.Timestamp, opts.Signatures, body, opts.Now, opts.Tolerance)
	}
	if verr, ok := errors.AsType[*webhook.VerifyError](err); ok {
		fmt.Fprintln(opts.Factory.IOStreams.ErrOut, failureLine(verr))
		return cmdutil.SilentExit(cmdutil.ExitFailure)
	}
	return err
}

// failureLine is the one line a failed verification prints: the reason
// word first, where scripts match it, then why.
func failureLine(err *webhook.VerifyError) string {
	detail := err.Error()
	if prefix := "webhook: " + string(err.Reason) + ": "; len(detail) > len(prefix) && detail[:len(prefix)] == prefix {
		return string(err.Reason) + ": " + detail[len(prefix):]
	}
	return string(err.Reason)
}

// requestLine matches an HTTP/1 request line ("POST /hook HTTP/1.1") that
// a captured header block may start with.
var requestLine = regexp.MustCompile(`^[A-Z]+ \S+ HTTP/\d(\.\d)?$`)

// parseHeaderBlock reads "Name: value" lines up to the first blank line
// (a body after it is ignored), skipping a leading request line. CRLF and
// LF line ends are both accepted.
func parseHeaderBlock(raw []byte) (textproto.MIMEHeader, error) {
	r := bufio.NewReader(bytes.NewReader(raw))
	first, err := r.Peek(min(len(raw), 8<<10))
	if err != nil && err != io.EOF {
		return nil, err
	}
	line, _, _ := bytes.Cut(first, []byte("\n"))
	if requestLine.Match(bytes.TrimRight(line, "\r")) {
		if _, err := r.ReadSlice('\n'); err != nil {
			return textproto.MIMEHeader{}, nil
		}
	}
	header, err := textproto.NewReader(r).ReadMIMEHeader()
	if err != nil && !(errors.Is(err, io.EOF) && len(header) > 0) {
		if errors.Is(err, io.EOF) {
			return textproto.MIMEHeader{}, nil
		}
		return nil, fmt.Errorf("not an HTTP header block: %v", err)
	}
	return header, nil
}
