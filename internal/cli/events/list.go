package events

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// ListOptions is `hubctl events list` parsed.
type ListOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	Params  hubapi.EventListParams
	// Next is the command the table's next-page hint repeats.
	Next string
}

// NewCmdList returns `hubctl events list`; a non-nil runF replaces the
// real run.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	var format, cursor string
	var params hubapi.EventListParams
	cmd := &cobra.Command{
		Use:   "list [--type T] [--source S] [--subject S] [--since T] [--until T]",
		Short: "Search the tenant's stored events, newest first",
		Long: fmt.Sprintf(`Search the tenant's inbox, the events the hub stored, newest first, --limit
at a time (at most %d): by exact event key (--type), source and subject, and
by when the hub received them (--since inclusive, --until exclusive, RFC
3339). A time window keeps the search quick on a large inbox.
hubctl events get shows one event with every delivery of it.`, hubapi.MaxPageLimit),
		Example: `  hubctl events list --type transaction.posted --since 2026-12-01T00:00:00Z
  hubctl events list --subject acct-7 -o json --jq '.items[].id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if err := cmdutil.CheckLimit(params.Limit); err != nil {
				return err
			}
			for _, bound := range []struct{ flag, value string }{{"since", params.Since}, {"until", params.Until}} {
				if _, err := time.Parse(time.RFC3339Nano, bound.value); bound.value != "" && err != nil {
					return cmdutil.UsageErrorf("invalid --%s %q: use RFC 3339, e.g. 2026-01-02T15:04:05Z", bound.flag, bound.value)
				}
			}
			params.Cursor = cursor
			opts := &ListOptions{Factory: f, Format: fm, Params: params, Next: "hubctl events list" + repeatFilters(cmd, params.Limit)}
			return cmdutil.Run(cmd.Context(), opts, runF, listRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".items[].id")
	cmd.Flags().String(hubaccess.FlagTenant, "", "tenant to act on ("+hubaccess.EnvTenant+"); required on the database and with the admin token")
	cmdutil.AddPageFlags(cmd, &params.Limit, &cursor, "events")
	cmd.Flags().StringVar(&params.Type, "type", "", "only events of this event key, e.g. transaction.posted")
	cmd.Flags().StringVar(&params.Source, "source", "", "only events from this source")
	cmd.Flags().StringVar(&params.Subject, "subject", "", "only events with this subject")
	cmd.Flags().StringVar(&params.Since, "since", "", "only events received at or after this time (RFC 3339)")
	cmd.Flags().StringVar(&params.Until, "until", "", "only events received before this time (RFC 3339)")
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	page, err := hubaccess.CallForTenant(ctx, opts.Factory, func(h hubapi.ControlPlane, tenant string) (hubapi.Page[hubapi.InboxEvent], error) {
		return h.ListEvents(ctx, tenant, opts.Params)
	})
	if err != nil {
		return err
	}
	return output.PrintPage(output.New(opts.Factory.IOStreams, opts.Format), page, eventHeader, eventRow, "events", opts.Next)
}

func eventHeader(t *output.TableWriter) {
	t.Columns(
		output.Column{Name: "ce id", Priority: 9},
		output.Column{Name: "type", Priority: 8, Min: 12},
		output.Column{Name: "source", Priority: 5, Min: 10},
		output.Column{Name: "subject", Priority: 3, Min: 10},
		output.Column{Name: "received", Priority: 7},
		output.Column{Name: "size", Priority: 4},
	)
}

func eventRow(t *output.TableWriter, e hubapi.InboxEvent) {
	t.Row(e.ID, e.Type, e.Source, orDash(e.Subject),
		e.ReceivedAt.Format(time.RFC3339), strconv.Itoa(e.SizeBytes))
}

// repeatFilters spells the flags the next page needs besides the cursor.
func repeatFilters(cmd *cobra.Command, limit int) string {
	s := cmdutil.RepeatLimit(cmd, limit)
	for _, name := range []string{"type", "source", "subject", "since", "until"} {
		if cmd.Flags().Changed(name) {
			s += " --" + name + " " + strconv.Quote(cmd.Flag(name).Value.String())
		}
	}
	return s
}
