package keys

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// ListOptions is `hubctl tenants keys list` parsed.
type ListOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	Tenant  string
	Page    hubapi.ListParams
	// Next is the command the table's next-page hint repeats.
	Next string
}

// NewCmdList returns `hubctl tenants keys list`; a non-nil runF replaces the
// real run.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	var format, cursor string
	var limit int
	cmd := &cobra.Command{
		Use:   "list TENANT",
		Short: "List a tenant's API keys, revoked ones included",
		Long: fmt.Sprintf(`List a tenant's API keys, oldest first, --limit at a time (at most %d):
their ids, names, the first characters of each key (to recognise one), when
each was last used and whether it is revoked. Keys themselves are never shown
again.`, hubapi.MaxPageLimit),
		Example: `  hubctl tenants keys list acme
  hubctl tenants keys list acme -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if err := cmdutil.CheckLimit(limit); err != nil {
				return err
			}
			if err := hubapi.CheckTenantID(args[0]); err != nil {
				return err
			}
			opts := &ListOptions{
				Factory: f, Format: fm, Tenant: args[0],
				Page: hubapi.ListParams{Limit: limit, Cursor: cursor},
				Next: "hubctl tenants keys list " + args[0] + cmdutil.RepeatLimit(cmd, limit),
			}
			return cmdutil.Run(cmd.Context(), opts, runF, listRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".items[].id")
	cmdutil.AddPageFlags(cmd, &limit, &cursor, "keys")
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	page, err := hubaccess.Call(ctx, opts.Factory, func(h hubapi.ControlPlane) (hubapi.Page[hubapi.APIKey], error) {
		return h.ListAPIKeys(ctx, opts.Tenant, opts.Page)
	})
	if err != nil {
		return err
	}
	ios := opts.Factory.IOStreams
	return output.PrintPage(output.New(ios, opts.Format), page, keyHeader,
		func(t *output.TableWriter, key hubapi.APIKey) { keyRow(t, ios, key) },
		"keys", opts.Next)
}
