package keys

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// RevokeOptions is `hubctl tenants keys revoke` parsed.
type RevokeOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	Tenant  string
	KeyID   string
}

// NewCmdRevoke returns `hubctl tenants keys revoke`; a non-nil runF replaces
// the real run.
func NewCmdRevoke(f *cmdutil.Factory, runF func(*RevokeOptions) error) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "revoke TENANT KEY_ID",
		Short: "Stop an API key from working, at once and for good",
		Long: `Revoke an API key: every request with it is refused from now on (401).
Revoking a revoked key changes nothing and keeps the first revocation time.
Exits 3 when the tenant has no key with that id.`,
		Example: `  hubctl tenants keys revoke acme 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if err := hubapi.CheckTenantID(args[0]); err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &RevokeOptions{Factory: f, Format: fm, Tenant: args[0], KeyID: args[1]}, runF, revokeRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".id")
	return cmd
}

func revokeRun(ctx context.Context, opts *RevokeOptions) error {
	key, err := hubaccess.Call(ctx, opts.Factory, func(h hubapi.ControlPlane) (hubapi.APIKey, error) {
		return h.RevokeAPIKey(ctx, opts.Tenant, opts.KeyID)
	})
	if err != nil {
		return err
	}
	ios := opts.Factory.IOStreams
	return output.New(ios, opts.Format).Print(key, func(t *output.TableWriter) {
		keyHeader(t)
		keyRow(t, ios, key)
	})
}
