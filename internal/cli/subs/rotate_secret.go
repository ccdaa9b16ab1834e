package subs

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// RotateSecretOptions is `hubctl subs rotate-secret` parsed.
type RotateSecretOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	ID      string
	// Secret is the new secret; "" lets the hub generate one.
	Secret string
}

// NewCmdRotateSecret returns `hubctl subs rotate-secret`; a non-nil runF
// replaces the real run.
func NewCmdRotateSecret(f *cmdutil.Factory, runF func(*RotateSecretOptions) error) *cobra.Command {
	var format, secret string
	cmd := &cobra.Command{
		Use:   "rotate-secret ID [--signing-secret S]",
		Short: "Give a webhook a new signing secret, printed once",
		Long: `Rotate a webhook's signing secret to the given one (at least 24 characters)
or to one the hub generates. Deliveries carry signatures of both the new and
the previous secret until previous_secret_expires_at, so receivers can switch
without losing a delivery. The new secret is printed once, here.

Exits 3 when the tenant has no subscription with that id, 1 when it is not a
webhook.`,
		Example: `  hubctl subs rotate-secret 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b
  hubctl subs rotate-secret 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --signing-secret "$(openssl rand -hex 32)"`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &RotateSecretOptions{Factory: f, Format: fm, ID: args[0], Secret: secret}, runF, rotateSecretRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".signing_secret")
	cmd.Flags().StringVar(&secret, flagSigningSecret, "", "the new secret, at least 24 characters (default: the hub generates one)")
	return cmd
}

func rotateSecretRun(ctx context.Context, opts *RotateSecretOptions) error {
	f := opts.Factory
	rotation, err := hubaccess.CallForSubscription(ctx, f, opts.ID, func(h hubapi.ControlPlane, tenant, id string) (hubapi.SecretRotation, error) {
		return h.RotateSecret(ctx, tenant, id, opts.Secret)
	})
	if err != nil {
		return err
	}
	err = output.New(f.IOStreams, opts.Format).Print(rotation, func(t *output.TableWriter) {
		t.Header("signing secret", "previous secret expires")
		t.Row(rotation.SigningSecret, output.OptionalTime(rotation.PreviousSecretExpiresAt))
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f.IOStreams.ErrOut, "Store the signing secret now: it will not be shown again.")
	return err
}
