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

// ListOptions is `hubctl subs list` parsed.
type ListOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	Page    hubapi.ListParams
	// Next is the command the table's next-page hint repeats.
	Next string
}

// NewCmdList returns `hubctl subs list`; a non-nil runF replaces the real
// run.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	var format, cursor string
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tenant's subscriptions, oldest first",
		Long: fmt.Sprintf(`List the tenant's subscriptions, oldest first, --limit at a time (at most
%d). Credentials and signing secrets show as "****". When more
follow, -o json and -o yaml carry next_cursor and the table prints the
command for the next page on stderr.`, hubapi.MaxPageLimit),
		Example: `  hubctl subs list
  hubctl subs list --tenant acme -o json --limit 500`,
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
				Next: "hubctl subs list" + cmdutil.RepeatLimit(cmd, limit),
			}
			return cmdutil.Run(cmd.Context(), opts, runF, listRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".items[].id")
	cmdutil.AddPageFlags(cmd, &limit, &cursor, "subscriptions")
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	f := opts.Factory
	page, err := hubaccess.CallForTenant(ctx, f, func(h hubapi.ControlPlane, tenant string) (hubapi.Page[hubapi.Subscription], error) {
		return h.ListSubscriptions(ctx, tenant, opts.Page)
	})
	if err != nil {
		return err
	}
	return output.PrintPage(output.New(f.IOStreams, opts.Format), page, subscriptionHeader,
		func(t *output.TableWriter, sub hubapi.Subscription) { subscriptionRow(t, f, sub) },
		"subscriptions", opts.Next)
}
