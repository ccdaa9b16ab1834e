package tenants

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// GetOptions is `hubctl tenants get` parsed.
type GetOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	ID      string
}

// NewCmdGet returns `hubctl tenants get`; a non-nil runF replaces the real
// run.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "Show one tenant",
		Long:  `Show one tenant. Exits 3 when there is no tenant with that id.`,
		Example: `  hubctl tenants get acme
  hubctl tenants get acme -o yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := checkOne(f, format, args[0])
			if err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &GetOptions{Factory: f, Format: fm, ID: args[0]}, runF, getRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".id")
	return cmd
}

func getRun(ctx context.Context, opts *GetOptions) error {
	return runOne(ctx, opts.Factory, opts.Format, func(h hubapi.ControlPlane) (hubapi.Tenant, error) {
		return h.GetTenant(ctx, opts.ID)
	})
}
