package tenants

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// CreateOptions is `hubctl tenants create` parsed.
type CreateOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	ID      string
}

// NewCmdCreate returns `hubctl tenants create`; a non-nil runF replaces the
// real run.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "create ID",
		Short: "Add an active tenant",
		Long: `Add a tenant to the roster, active. Creating a tenant that already exists
fails (exit 1) and leaves it as it is.`,
		Example: `  hubctl tenants create acme
  hubctl tenants create acme -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := checkOne(f, format, args[0])
			if err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &CreateOptions{Factory: f, Format: fm, ID: args[0]}, runF, createRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".id")
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	return runOne(ctx, opts.Factory, opts.Format, func(h hubapi.ControlPlane) (hubapi.Tenant, error) {
		return h.CreateTenant(ctx, opts.ID)
	})
}
