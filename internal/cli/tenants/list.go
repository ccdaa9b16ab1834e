package tenants

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// ListOptions is `hubctl tenants list` parsed.
type ListOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	Page    hubapi.ListParams
	// Next is the command the table's next-page hint repeats.
	Next string
}

// NewCmdList returns `hubctl tenants list`; a non-nil runF replaces the real
// run.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	var format, cursor string
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List tenants in id order",
		Long: fmt.Sprintf(`List tenants in id order, --limit at a time (at most %d). When more
follow, -o json and -o yaml carry next_cursor and the table prints the
command for the next page on stderr.`, hubapi.MaxPageLimit),
		Example: `  hubctl tenants list
  hubctl tenants list -o json --limit 500`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if err := cmdutil.CheckLimit(limit); err != nil {
				return err
			}
			opts := &ListOptions{
				Factory: f, Format: fm,
				Page: hubapi.ListParams{Limit: limit, Cursor: cursor},
				Next: "hubctl tenants list" + cmdutil.RepeatLimit(cmd, limit),
			}
			return cmdutil.Run(cmd.Context(), opts, runF, listRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".items[].id")
	cmdutil.AddPageFlags(cmd, &limit, &cursor, "tenants")
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	page, err := hubaccess.Call(ctx, opts.Factory, func(h hubapi.ControlPlane) (hubapi.Page[hubapi.Tenant], error) {
		return h.ListTenants(ctx, opts.Page)
	})
	if err != nil {
		return err
	}
	ios := opts.Factory.IOStreams
	return output.PrintPage(output.New(ios, opts.Format), page, tenantHeader,
		func(t *output.TableWriter, tenant hubapi.Tenant) { addRow(t, ios, tenant) },
		"tenants", opts.Next)
}
