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

// DeleteOptions is `hubctl subs delete` parsed.
type DeleteOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	ID      string
	// Yes skips the confirmation asked on a terminal.
	Yes bool
}

// NewCmdDelete returns `hubctl subs delete`; a non-nil runF replaces the
// real run.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	var format string
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a subscription and cancel its pending deliveries",
		Long: `Delete a subscription. Its pending deliveries are canceled with it (the
answer says how many); deliveries in flight finish their attempt. On a
terminal it asks for confirmation first; --yes skips the question.

Exits 3 when the tenant has no subscription with that id.`,
		Example:           `  hubctl subs delete 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &DeleteOptions{Factory: f, Format: fm, ID: args[0], Yes: yes}, runF, deleteRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".id")
	cmdutil.AddYesFlag(cmd, &yes)
	return cmd
}

func deleteRun(ctx context.Context, opts *DeleteOptions) error {
	f := opts.Factory
	if err := cmdutil.ConfirmDestructive(f.IOStreams, opts.Yes, "Delete subscription "+opts.ID+" and cancel its pending deliveries?"); err != nil {
		return err
	}
	deleted, err := hubaccess.CallForSubscription(ctx, f, opts.ID, func(h hubapi.ControlPlane, tenant, id string) (hubapi.SubscriptionDeleted, error) {
		return h.DeleteSubscription(ctx, tenant, id)
	})
	if err != nil {
		return err
	}
	return output.New(f.IOStreams, opts.Format).Print(deleted, func(t *output.TableWriter) {
		t.Header("id", "canceled deliveries")
		t.Row(deleted.ID, fmt.Sprint(deleted.CanceledJobs))
	})
}
