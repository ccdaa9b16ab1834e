package subs

import (
	"context"
	"fmt"
	"slices"

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
	// Counts adds each subscription's deliveries of the last 24 h.
	Counts bool
	// Next is the command the table's next-page hint repeats.
	Next string
}

// NewCmdList returns `hubctl subs list`; a non-nil runF replaces the real
// run.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	var format, cursor string
	var limit int
	var counts bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tenant's subscriptions, oldest first",
		Long: fmt.Sprintf(`List the tenant's subscriptions, oldest first, --limit at a time (at most
%d). Credentials and signing secrets show as "****". When more
follow, -o json and -o yaml carry next_cursor and the table prints the
command for the next page on stderr.

--counts adds each subscription's deliveries created in the last 24 hours
by where they stand now: delivered, failed (still being tried after a
failed attempt) and dead, as the table's "24h ok/failed/dead" column and as
last_24h in -o json and -o yaml. Each subscription's latest 1,000
deliveries are counted; "1000+" says the day holds more.`, hubapi.MaxPageLimit),
		Example: `  hubctl subs list
  hubctl subs list --tenant acme -o json --limit 500
  hubctl subs list --counts`,
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
				Page: hubapi.ListParams{Limit: limit, Cursor: cursor}, Counts: counts,
				Next: "hubctl subs list" + repeatCounts(counts) + cmdutil.RepeatLimit(cmd, limit),
			}
			return cmdutil.Run(cmd.Context(), opts, runF, listRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".items[].id")
	cmdutil.AddPageFlags(cmd, &limit, &cursor, "subscriptions")
	cmd.Flags().BoolVar(&counts, "counts", false, "add each subscription's delivered, failed and dead of the last 24 hours")
	return cmd
}

func repeatCounts(counts bool) string {
	if counts {
		return " --counts"
	}
	return ""
}

// listedSubscription is a row of the list: the subscription and, with
// --counts, its last day.
type listedSubscription struct {
	hubapi.Subscription
	Last24h *hubapi.SubscriptionDeliveryCounts `json:"last_24h,omitempty" yaml:"last_24h,omitempty"`
}

func listRun(ctx context.Context, opts *ListOptions) error {
	f := opts.Factory
	page, err := hubaccess.CallForTenant(ctx, f, func(h hubapi.ControlPlane, tenant string) (hubapi.Page[listedSubscription], error) {
		subs, err := h.ListSubscriptions(ctx, tenant, opts.Page)
		if err != nil {
			return hubapi.Page[listedSubscription]{}, err
		}
		rows := hubapi.Page[listedSubscription]{Items: make([]listedSubscription, len(subs.Items)), NextCursor: subs.NextCursor}
		for i, sub := range subs.Items {
			rows.Items[i].Subscription = sub
		}
		if opts.Counts {
			err = addCounts(ctx, h, tenant, rows.Items)
		}
		return rows, err
	})
	if err != nil {
		return err
	}
	header := subscriptionHeader
	if opts.Counts {
		header = func(t *output.TableWriter) { subscriptionColumns(t, countsColumn) }
	}
	return output.PrintPage(output.New(f.IOStreams, opts.Format), page, header,
		func(t *output.TableWriter, row listedSubscription) {
			if opts.Counts {
				subscriptionRow(t, f, row.Subscription, countsCell(*row.Last24h))
				return
			}
			subscriptionRow(t, f, row.Subscription)
		},
		"subscriptions", opts.Next)
}

// addCounts fills each row's last day, as many subscriptions a call as the
// hub counts at once.
func addCounts(ctx context.Context, h hubapi.ControlPlane, tenant string, rows []listedSubscription) error {
	for chunk := range slices.Chunk(rows, hubapi.MaxDeliveryCountsSubscriptions) {
		ids := make([]string, len(chunk))
		for i, row := range chunk {
			ids[i] = row.ID
		}
		counts, err := h.CountDeliveries(ctx, tenant, ids)
		if err != nil {
			return err
		}
		for i := range chunk {
			chunk[i].Last24h = &counts.Items[i]
		}
	}
	return nil
}

var countsColumn = output.Column{Name: "24h ok/failed/dead", Priority: 3}

// countsCell says a subscription's day in one short cell: 950/3/2, and
// 1000+ when only the latest deliveries were counted.
func countsCell(c hubapi.SubscriptionDeliveryCounts) string {
	cell := fmt.Sprintf("%d/%d/%d", c.Delivered, c.Failed, c.Dead)
	if c.Sampled {
		cell = fmt.Sprintf("%d+ (%s)", hubapi.DeliveryCountsSample, cell)
	}
	return cell
}
