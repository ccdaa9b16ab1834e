// Package sig implements `hubctl sig sign|verify` (SPEC §6.2): webhook
// signatures for scripts and CI, on pkg/webhook, so the command line and a
// Go receiver can never disagree about a signature.
package sig

import (
	"bufio"
	"bytes"
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

// maxBodyBytes bounds what is read as the body: far above the hub's
// largest event, so only a mistake (the wrong file) hits it.
const maxBodyBytes = 64 << 20

// NewCmd returns `hubctl sig`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sig",
		Short: "Sign and verify webhook payloads",
		Long: `Sign and verify webhook deliveries as the hub does (SPEC §3.5):
X-Webhook-Signature is "v1,sha256=" + hex(HMAC-SHA256(secret, "v1:" +
timestamp + "." + body)), with X-Webhook-Timestamp in Unix seconds.`,
	}
	cmd.AddCommand(newSignCmd(f), newVerifyCmd(f))
	return cmd
}

func newSignCmd(f *cmdutil.Factory) *cobra.Command {
	var (
		secrets   []string
		bodyFile  string
		timestamp int64
	)
	cmd := &cobra.Command{
		Use:   "sign --secret S (--body-file F | stdin) [--timestamp T]",
		Short: "Print the signature headers of a body",
		Long: `Print the X-Webhook-Timestamp and X-Webhook-Signature header lines the hub
would send with the body (read from --body-file, or standard input). The
timestamp defaults to now. A repeated --secret prints one signature line per
secret, in order, as the hub does during a rotation (newest first).`,
		Example: `  hubctl sig sign --secret "$SECRET" --body-file event.json
  printf '{"amount":1000}' | hubctl sig sign --secret "$SECRET" --timestamp 1767225600`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireSecrets(secrets); err != nil {
				return err
			}
			if timestamp < 0 {
				return cmdutil.UsageErrorf("invalid --timestamp %d: Unix seconds are not negative", timestamp)
			}
			if !cmd.Flags().Changed("timestamp") {
				timestamp = time.Now().Unix()
			}
			body, err := readBody(f, bodyFile)
			if err != nil {
				return err
			}
			var out bytes.Buffer
			fmt.Fprintf(&out, "%s: %d\n", webhook.HeaderTimestamp, timestamp)
			for _, signature := range webhook.SignAll(secrets, timestamp, body) {
				fmt.Fprintf(&out, "%s: %s\n", webhook.HeaderSignature, signature)
			}
			_, err = f.IOStreams.Out.Write(out.Bytes())
			return err
		},
	}
	cmd.Flags().StringArrayVar(&secrets, "secret", nil, "signing secret (repeatable: one signature line each)")
	cmd.Flags().StringVar(&bodyFile, "body-file", "", "file holding the body (default: standard input)")
	cmd.Flags().Int64Var(&timestamp, "timestamp", 0, "Unix seconds to sign (default: now)")
	return cmd
}

type verifyFlags struct {
	secrets, signatures   []string
	timestamp             string
	bodyFile, headersFile string
	tolerance             time.Duration
	now                   int64
}

func newVerifyCmd(f *cmdutil.Factory) *cobra.Command {
	var vf verifyFlags
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
read from --body-file, or standard input. Comparison is constant-time.`,
		Example: `  hubctl sig verify --secret "$SECRET" --timestamp 1767225600 \
    --signature 'v1,sha256=6816b01b...' --body-file body.json
  hubctl sig verify --secret "$NEW" --secret "$OLD" --headers-file request-headers.txt --body-file body.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return verify(f, cmd, vf)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&vf.secrets, "secret", nil, "accepted signing secret (repeatable, e.g. both during a rotation)")
	fs.StringVar(&vf.timestamp, "timestamp", "", "the X-Webhook-Timestamp value")
	fs.StringArrayVar(&vf.signatures, "signature", nil, "an X-Webhook-Signature value (repeatable)")
	fs.StringVar(&vf.bodyFile, "body-file", "", "file holding the raw body (default: standard input)")
	fs.StringVar(&vf.headersFile, "headers-file", "", "file holding a raw HTTP header block with the signature headers")
	fs.DurationVar(&vf.tolerance, "tolerance", webhook.DefaultTolerance, "how far the timestamp may be from now, either way")
	// A testing aid: conformance vectors carry the receiver's clock. Hidden,
	// because a script that set it would defeat the replay protection.
	fs.Int64Var(&vf.now, "now", 0, "verify as if the clock read these Unix seconds (testing aid)")
	_ = fs.MarkHidden("now")
	return cmd
}

func verify(f *cmdutil.Factory, cmd *cobra.Command, vf verifyFlags) error {
	if err := requireSecrets(vf.secrets); err != nil {
		return err
	}
	if vf.tolerance <= 0 {
		return cmdutil.UsageErrorf("invalid --tolerance %s: must be positive", vf.tolerance)
	}
	timestamp, signatures := vf.timestamp, vf.signatures
	tsGiven := cmd.Flags().Changed("timestamp")
	if vf.headersFile != "" {
		raw, err := os.ReadFile(vf.headersFile)
		if err != nil {
			return cmdutil.UsageErrorf("read --headers-file: %v", err)
		}
		header, err := parseHeaderBlock(raw)
		if err != nil {
			return cmdutil.UsageErrorf("--headers-file %s: %v", vf.headersFile, err)
		}
		if !tsGiven {
			lines := header.Values(webhook.HeaderTimestamp)
			tsGiven = len(lines) > 0
			// Several timestamp lines are as malformed as none: which
			// one was signed is unknown (as webhook.VerifyRequest rules).
			if len(lines) == 1 {
				timestamp = lines[0]
			}
		}
		signatures = append(header.Values(webhook.HeaderSignature), signatures...)
	}
	if !tsGiven {
		return cmdutil.UsageErrorf("no timestamp: pass --timestamp or a --headers-file with %s", webhook.HeaderTimestamp)
	}
	if len(signatures) == 0 {
		return cmdutil.UsageErrorf("no signature: pass --signature or a --headers-file with %s", webhook.HeaderSignature)
	}
	body, err := readBody(f, vf.bodyFile)
	if err != nil {
		return err
	}
	now := time.Now()
	if cmd.Flags().Changed("now") {
		now = time.Unix(vf.now, 0)
	}
	err = webhook.Verify(vf.secrets, timestamp, signatures, body, now, vf.tolerance)
	if verr, ok := errors.AsType[*webhook.VerifyError](err); ok {
		fmt.Fprintln(f.IOStreams.ErrOut, failureLine(verr))
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

// requireSecrets refuses a missing or empty secret: an empty HMAC key is
// public knowledge, so signing or accepting with it proves nothing.
func requireSecrets(secrets []string) error {
	if len(secrets) == 0 {
		return cmdutil.UsageErrorf("--secret is required")
	}
	for _, s := range secrets {
		if s == "" {
			return cmdutil.UsageErrorf("--secret is empty: an empty key would let anyone sign")
		}
	}
	return nil
}

// readBody reads the body, byte for byte, from path or standard input.
func readBody(f *cmdutil.Factory, path string) ([]byte, error) {
	var r io.Reader = f.IOStreams.In
	if path != "" && path != "-" {
		file, err := os.Open(path)
		if err != nil {
			return nil, cmdutil.UsageErrorf("read --body-file: %v", err)
		}
		defer file.Close()
		r = file
	}
	body, err := io.ReadAll(io.LimitReader(r, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the body: %w", err)
	}
	if len(body) > maxBodyBytes {
		return nil, cmdutil.UsageErrorf("the body is larger than %d bytes", maxBodyBytes)
	}
	return body, nil
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
