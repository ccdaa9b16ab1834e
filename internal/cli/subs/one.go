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

// OneOptions is a verb that acts on one subscription and prints it (get,
// enable, disable, verify), parsed.
type OneOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	ID      string
}

// oneSpec is what tells those verbs apart.
type oneSpec struct {
	verb, short, long string
	do                func(h hubapi.ControlPlane, ctx context.Context, tenant, id string) (hubapi.Subscription, error)
}

func newOneCmd(f *cmdutil.Factory, runF func(*OneOptions) error, spec oneSpec) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   spec.verb + " ID",
		Short: spec.short,
		Long:  spec.long + "\n\nID is the subscription's id, or its name when no other subscription of the\ntenant has it. Exits 3 when the tenant has no subscription with that id or\nname.",
		Example: fmt.Sprintf(`  hubctl subs %[1]s 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b
  hubctl subs %[1]s 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --tenant acme -o json`, spec.verb),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &OneOptions{Factory: f, Format: fm, ID: args[0]}, runF,
				func(ctx context.Context, opts *OneOptions) error { return oneRun(ctx, opts, spec.do) })
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".id")
	return cmd
}

func oneRun(ctx context.Context, opts *OneOptions, do func(h hubapi.ControlPlane, ctx context.Context, tenant, id string) (hubapi.Subscription, error)) error {
	f := opts.Factory
	sub, err := hubaccess.CallForSubscription(ctx, f, opts.ID, func(h hubapi.ControlPlane, tenant, id string) (hubapi.Subscription, error) {
		return do(h, ctx, tenant, id)
	})
	if err != nil {
		return err
	}
	return output.New(f.IOStreams, opts.Format).Print(sub, func(t *output.TableWriter) {
		subscriptionTable(t, f, sub)
	})
}
