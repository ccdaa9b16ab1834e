package tenants

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// StatusOptions is `hubctl tenants activate` or `deactivate` parsed: the
// two verbs are one use case with a different status.
type StatusOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	ID      string
	Status  string
	// Yes skips the confirmation a deactivation asks for on a terminal.
	Yes bool
}

// NewCmdActivate returns `hubctl tenants activate`; a non-nil runF replaces
// the real run.
func NewCmdActivate(f *cmdutil.Factory, runF func(*StatusOptions) error) *cobra.Command {
	return newStatusCmd(f, runF, "activate", hubapi.TenantActive,
		"Let a tenant's events in again",
		"Make the tenant active: ingest accepts its events again from the next roster refresh.")
}

// NewCmdDeactivate returns `hubctl tenants deactivate`; a non-nil runF
// replaces the real run.
func NewCmdDeactivate(f *cmdutil.Factory, runF func(*StatusOptions) error) *cobra.Command {
	return newStatusCmd(f, runF, "deactivate", hubapi.TenantInactive,
		"Stop accepting a tenant's events",
		`Make the tenant inactive: from the next roster refresh ingest discards its
events (reason inactive_tenant). Its subscriptions and stored events stay.
On a terminal it asks for confirmation first; --yes skips the question.`)
}

func newStatusCmd(f *cmdutil.Factory, runF func(*StatusOptions) error, verb, status, short, long string) *cobra.Command {
	var format string
	var yes bool
	cmd := &cobra.Command{
		Use:     verb + " ID",
		Short:   short,
		Long:    long + "\n\nExits 3 when there is no tenant with that id. Repeating it changes nothing.",
		Example: "  hubctl tenants " + verb + " acme",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := checkOne(f, format, args[0])
			if err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &StatusOptions{Factory: f, Format: fm, ID: args[0], Status: status, Yes: yes}, runF, statusRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, "")
	if status == hubapi.TenantInactive {
		cmdutil.AddYesFlag(cmd, &yes)
	}
	return cmd
}

func statusRun(ctx context.Context, opts *StatusOptions) error {
	if opts.Status == hubapi.TenantInactive {
		question := "Deactivate tenant " + opts.ID + "? Its events will be discarded from the next roster refresh."
		if err := cmdutil.ConfirmDestructive(opts.Factory.IOStreams, opts.Yes, question); err != nil {
			return err
		}
	}
	return runOne(ctx, opts.Factory, opts.Format, func(h hubapi.ControlPlane) (hubapi.Tenant, error) {
		return h.SetTenantStatus(ctx, opts.ID, opts.Status)
	})
}
