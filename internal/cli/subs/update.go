package subs

import (
	"context"

	"github.com/google/uuid"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// UpdateOptions is `hubctl subs update` parsed; ID is what the user typed,
// an id or a name. With --from-file the body is read (and checked against
// an ID that is an id) before the hub is reached; with the
// field flags it is built at run time, since --url alone needs the current
// sink's type.
type UpdateOptions struct {
	Factory  *cmdutil.Factory
	Format   output.Format
	ID       string
	FromFile *updateDocument
	// Changed reports whether the user set a flag; the body sends only those.
	Changed func(flag string) bool

	spec *specFlags
}

// NewCmdUpdate returns `hubctl subs update`; a non-nil runF replaces the
// real run.
func NewCmdUpdate(f *cmdutil.Factory, runF func(*UpdateOptions) error) *cobra.Command {
	var format string
	var spec specFlags
	cmd := &cobra.Command{
		Use:   "update ID|NAME [flags]",
		Short: "Change some fields of a subscription",
		Long: `Change the fields whose flags are given, and only those. --origin "" matches
every source again; --retry-schedule "" restores the default curve. --url
alone keeps the sink's type. A changed sink is verified again at once.
--signing-secret rotates to that secret, with the overlap of rotate-secret.
--signature-scheme switches how the webhook signs and rotates its secret
the same way: to --signing-secret when given, else to a generated one,
printed once, here. Until the overlap ends the old secret keeps signing in
the old scheme, so the receiver can switch at its own pace.

--from-file takes the request body of PATCH /v1/subscriptions/{id}, or the
whole subscription as get -o json prints it, edited: every writable field in
the file is sent, so change what you mean to and leave the rest as read. The
fields only the hub sets are dropped before sending: id, tenant_id,
verification_state, verification_error, disabled_reason, failing_since,
last_failure_at, previous_secret_expires_at, created_at, updated_at, breaker and rate. The
file's id, when it has one, must be the subscription's (the ID argument, or
the id of the subscription the NAME argument names), else the command exits
2 and changes nothing, so a file of another subscription is never applied.
Any other field the API does not know stops the command too (exit 2). A
credential or signing_secret left as get shows it, "****", keeps its current
value, and a sink sent back unchanged is not verified again.

Exits 3 when the tenant has no subscription with that id.`,
		Example: `  hubctl subs update 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --url https://acme.example/v2/hooks
  hubctl subs update 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --event-types '*' --origin ""
  hubctl subs update 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --signature-scheme standard-webhooks

  # Read, edit, send back: secrets stay as "****" and keep their values.
  hubctl subs get 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b -o json > sub.json
  $EDITOR sub.json
  hubctl subs update 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --from-file sub.json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if err := checkFromFile(cmd.Flags()); err != nil {
				return err
			}
			opts := &UpdateOptions{Factory: f, Format: fm, ID: args[0], Changed: cmd.Flags().Changed, spec: &spec}
			// The file is read before the hub is reached: a document that
			// cannot be applied needs no connection to be refused.
			if spec.fromFile != "" {
				doc, err := readUpdateFile(f, spec.fromFile)
				if err != nil {
					return err
				}
				// A name is checked once it is resolved to an id.
				if _, isID := uuid.Parse(args[0]); isID == nil {
					if err := doc.checkFor(args[0]); err != nil {
						return err
					}
				}
				opts.FromFile = &doc
			}
			return cmdutil.Run(cmd.Context(), opts, runF, updateRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".id")
	spec.register(cmd.Flags(), true)
	return cmd
}

func updateRun(ctx context.Context, opts *UpdateOptions) error {
	f := opts.Factory
	updated, err := hubaccess.CallForSubscription(ctx, f, opts.ID, func(h hubapi.ControlPlane, tenant, id string) (hubapi.UpdatedSubscription, error) {
		var in hubapi.SubscriptionUpdate
		if opts.FromFile != nil {
			if err := opts.FromFile.checkFor(id); err != nil {
				return hubapi.UpdatedSubscription{}, err
			}
			in = opts.FromFile.Body
		} else {
			var err error
			in, err = opts.spec.updateBody(opts.Changed, func() (string, error) {
				current, err := h.GetSubscription(ctx, tenant, id)
				if err != nil {
					return "", err
				}
				sinkType, _ := current.Sink["type"].(string)
				return sinkType, nil
			})
			if err != nil {
				return hubapi.UpdatedSubscription{}, err
			}
		}
		return h.UpdateSubscription(ctx, tenant, id, in)
	})
	if err != nil {
		return err
	}
	err = output.New(f.IOStreams, opts.Format).Print(updated, func(t *output.TableWriter) {
		subscriptionTable(t, f, updated.Subscription)
	})
	if err != nil || updated.SigningSecret == "" || updated.SigningSecret == hubapi.Masked {
		return err
	}
	return printSecret(f, opts.Format, updated.SigningSecret)
}
