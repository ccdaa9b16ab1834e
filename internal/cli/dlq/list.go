package dlq

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// ListOptions is `hubctl dlq list` parsed.
type ListOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	Params  hubapi.DeadLetterListParams
	// Next is the command the table's next-page hint repeats.
	Next string
}

// NewCmdList returns `hubctl dlq list`; a non-nil runF replaces the real
// run.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	var (
		ff             filterFlags
		format, cursor string
		limit          int
	)
	cmd := &cobra.Command{
		Use:   "list [--subscription ID] [--reason R] [--since T] [--until T]",
		Short: "List dead letters, most recently dead first",
		Long: fmt.Sprintf(`List the tenant's dead letters, most recently dead first, --limit at a time
(at most %d). When more follow, -o json and -o yaml carry next_cursor and the
table prints the command for the next page on stderr.`, hubapi.MaxPageLimit),
		Example: `  hubctl dlq list
  hubctl dlq list --subscription 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --reason exhausted -o json`,
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
				Params: hubapi.DeadLetterListParams{ListParams: hubapi.ListParams{Limit: limit, Cursor: cursor}, DeadLetterFilter: ff.filter()},
				Next:   nextPageCommand(cmd),
			}
			return cmdutil.Run(cmd.Context(), opts, runF, listRun)
		},
	}
	ff.register(cmd)
	cmdutil.AddOutputFlag(cmd, &format, ".items[].id")
	cmdutil.AddPageFlags(cmd, &limit, &cursor, "dead letters")
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	f := opts.Factory
	page, err := hubaccess.CallForTenant(ctx, f, func(h hubapi.ControlPlane, tenant string) (hubapi.Page[hubapi.DeadLetter], error) {
		p := opts.Params
		var err error
		if p.SubscriptionID, err = hubaccess.ResolveSubscriptionFlag(ctx, h, tenant, flagSubscription, p.SubscriptionID); err != nil {
			return hubapi.Page[hubapi.DeadLetter]{}, err
		}
		return h.ListDeadLetters(ctx, tenant, p)
	})
	if err != nil {
		return err
	}
	return output.PrintPage(output.New(f.IOStreams, opts.Format), page, deadLetterHeader,
		func(t *output.TableWriter, d hubapi.DeadLetter) { deadLetterRow(t, f, d) },
		"dead letters", opts.Next)
}

func deadLetterHeader(t *output.TableWriter) {
	t.Columns(
		output.Column{Name: "delivery", Priority: 9},
		output.Column{Name: "subscription", Priority: 4},
		output.Column{Name: "event", Priority: 3},
		output.Column{Name: "type", Priority: 7, Min: 12},
		output.Column{Name: "reason", Priority: 8},
		output.Column{Name: "attempts", Priority: 5},
		output.Column{Name: "last status", Priority: 2},
		output.Column{Name: "dead", Priority: 6},
	)
}

func deadLetterRow(t *output.TableWriter, f *cmdutil.Factory, d hubapi.DeadLetter) {
	t.Row(d.ID, d.SubscriptionID, orDash(d.EventID), orDash(d.EventType), output.Style(f.IOStreams, d.Reason),
		strconv.Itoa(d.Attempts), optionalInt(d.LastStatus), d.DeadAt.Format(time.RFC3339))
}

// nextPageCommand repeats the listing's own flags but its cursor, so the
// hint on stderr continues the same listing.
func nextPageCommand(cmd *cobra.Command) string {
	args := []string{cmd.CommandPath()}
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if fl.Name != "cursor" {
			args = append(args, "--"+fl.Name, fl.Value.String())
		}
	})
	return strings.Join(args, " ")
}
