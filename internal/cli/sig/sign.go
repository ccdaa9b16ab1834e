package sig

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/pkg/webhook"
)

// SignOptions is `hubctl sig sign` parsed.
type SignOptions struct {
	Factory   *cmdutil.Factory
	Secrets   []string
	BodyFile  string
	Timestamp int64
	// Scheme is lerian unless --scheme says; ID is the standard-webhooks
	// message id.
	Scheme signatureScheme
	ID     string
}

// NewCmdSign returns `hubctl sig sign`; a non-nil runF replaces the real run.
func NewCmdSign(f *cmdutil.Factory, runF func(*SignOptions) error) *cobra.Command {
	opts := &SignOptions{Factory: f}
	var schemeName string
	cmd := &cobra.Command{
		Use:   "sign --secret S (--body-file F | stdin) [--timestamp T]",
		Short: "Print the signature headers of a body",
		Long: `Print the X-Webhook-Timestamp and X-Webhook-Signature header lines the hub
would send with the body (read from --body-file, or standard input). The
timestamp defaults to now. A repeated --secret prints one signature line per
secret, in order, as the hub does during a rotation (newest first).
--scheme standard-webhooks prints webhook-id, webhook-timestamp and one
webhook-signature line whose values (one per secret) are space-separated.`,
		Example: `  hubctl sig sign --secret "$SECRET" --body-file event.json
  printf '{"amount":1000}' | hubctl sig sign --secret "$SECRET" --timestamp 1767225600
  hubctl sig sign --scheme standard-webhooks --secret "$WHSEC" --id "$EVENT_ID" --body-file event.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireSecrets(opts.Secrets); err != nil {
				return err
			}
			var err error
			if opts.Scheme, err = parseScheme(schemeName, opts.ID, opts.Secrets); err != nil {
				return err
			}
			if opts.Scheme.Name == webhook.SchemeStandardWebhooks && opts.ID == "" {
				return cmdutil.UsageErrorf("--id is required with --scheme standard-webhooks: the webhook-id (the event id) is signed")
			}
			if opts.Timestamp < 0 {
				return cmdutil.UsageErrorf("invalid --timestamp %d: Unix seconds are not negative", opts.Timestamp)
			}
			if !cmd.Flags().Changed("timestamp") {
				opts.Timestamp = time.Now().Unix()
			}
			return cmdutil.Run(cmd.Context(), opts, runF, signRun)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Secrets, "secret", nil, "signing secret (repeatable: one signature line each)")
	cmd.Flags().StringVar(&opts.BodyFile, "body-file", "", "file holding the body (default: standard input)")
	cmd.Flags().Int64Var(&opts.Timestamp, "timestamp", 0, "Unix seconds to sign (default: now)")
	cmd.Flags().StringVar(&schemeName, "scheme", webhook.SchemeLerian, schemeUsage)
	cmd.Flags().StringVar(&opts.ID, "id", "", "the webhook-id to sign (standard-webhooks only)")
	return cmd
}

func signRun(_ context.Context, opts *SignOptions) error {
	body, err := readBody(opts.Factory, opts.BodyFile)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if opts.Scheme.Name == webhook.SchemeStandardWebhooks {
		signature, err := webhook.SignStandard(opts.Secrets, opts.ID, opts.Timestamp, body)
		if err != nil {
			return cmdutil.UsageErrorf("%v", err)
		}
		fmt.Fprintf(&out, "%s: %s\n%s: %d\n%s: %s\n", webhook.HeaderWebhookID, opts.ID,
			webhook.HeaderWebhookTimestamp, opts.Timestamp, webhook.HeaderWebhookSignature, signature)
		_, err = opts.Factory.IOStreams.Out.Write(out.Bytes())
		return err
	}
	fmt.Fprintf(&out, "%s: %d\n", webhook.HeaderTimestamp, opts.Timestamp)
	for _, signature := range webhook.SignAll(opts.Secrets, opts.Timestamp, body) {
		fmt.Fprintf(&out, "%s: %s\n", webhook.HeaderSignature, signature)
	}
	_, err = opts.Factory.IOStreams.Out.Write(out.Bytes())
	return err
}
