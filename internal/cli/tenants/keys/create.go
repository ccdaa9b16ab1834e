package keys

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// CreateOptions is `hubctl tenants keys create` parsed.
type CreateOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	Tenant  string
	Name    string
}

// NewCmdCreate returns `hubctl tenants keys create`; a non-nil runF replaces
// the real run.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	var format, name string
	cmd := &cobra.Command{
		Use:   "create TENANT --name NAME",
		Short: "Issue an API key for a tenant and print it once",
		Long: `Issue an API key for a tenant. The key is printed once, here: store it now,
it cannot be shown again. The name says what the key is for (a service, an
environment) so that it can be found and revoked later.`,
		Example: `  hubctl tenants keys create acme --name billing-service
  HUBCTL_TOKEN=$(hubctl tenants keys create acme --name ci -o json | jq -r .key)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("name") {
				return cmdutil.UsageErrorf("--name is required: say what the key is for, e.g. --name billing-service")
			}
			if err := hubapi.CheckTenantID(args[0]); err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &CreateOptions{Factory: f, Format: fm, Tenant: args[0], Name: name}, runF, createRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".key")
	cmd.Flags().StringVar(&name, "name", "", "what the key is for (required)")
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	key, err := hubaccess.Call(ctx, opts.Factory, func(h hubapi.ControlPlane) (hubapi.CreatedAPIKey, error) {
		return h.CreateAPIKey(ctx, opts.Tenant, opts.Name)
	})
	if err != nil {
		return err
	}
	ios := opts.Factory.IOStreams
	err = output.New(ios, opts.Format).Print(key, func(t *output.TableWriter) {
		t.Header("id", "name", "key", "created")
		t.Row(key.ID, key.Name, key.Key, key.CreatedAt.Format(time.RFC3339))
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(ios.ErrOut, "Store this key now: it will not be shown again.")
	return err
}
