package subs

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/deliveries"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// DeliveriesOptions is `hubctl subs deliveries` parsed.
type DeliveriesOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	ID      string
	Params  hubapi.DeliveryListParams
	// Next is the command the table's next-page hint repeats.
	Next string
}

// NewCmdDeliveries returns `hubctl subs deliveries`; a non-nil runF replaces
// the real run.
func NewCmdDeliveries(f *cmdutil.Factory, runF func(*DeliveriesOptions) error) *cobra.Command {
	var format, cursor, state string
	var limit int
	states := strings.Join(hubapi.DeliveryStates, ", ")
	cmd := &cobra.Command{
		Use:   "deliveries ID [--state S] [--limit N]",
		Short: "List a subscription's deliveries, newest first",
		Long: fmt.Sprintf(`List a subscription's deliveries, newest event first, --limit at a time (at
most %d): the event each carries, its state (%s), how many attempts
it made and the status the destination last answered. hubctl deliveries get
shows one delivery's attempts. A deleted subscription's deliveries stay
listed. When more follow, -o json and -o yaml carry next_cursor and the table
prints the command for the next page on stderr.

Exits 3 when the tenant has no subscription with that id.`, hubapi.MaxPageLimit, states),
		Example: `  hubctl subs deliveries 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b
  hubctl subs deliveries 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --state dead --limit 20 -o json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if err := cmdutil.CheckLimit(limit); err != nil {
				return err
			}
			if state != "" && !slices.Contains(hubapi.DeliveryStates, state) {
				return cmdutil.UsageErrorf("invalid --state %q: use one of %s", state, states)
			}
			opts := &DeliveriesOptions{
				Factory: f, Format: fm, ID: args[0],
				Params: hubapi.DeliveryListParams{ListParams: hubapi.ListParams{Limit: limit, Cursor: cursor}, State: state},
				Next:   nextPageCommand(cmd, args[0], state, limit),
			}
			return cmdutil.Run(cmd.Context(), opts, runF, deliveriesRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".items[].id")
	cmd.Flags().StringVar(&state, "state", "", "only deliveries in this state: "+states)
	cmdutil.AddPageFlags(cmd, &limit, &cursor, "deliveries")
	return cmd
}

func deliveriesRun(ctx context.Context, opts *DeliveriesOptions) error {
	f := opts.Factory
	page, err := hubaccess.CallForSubscription(ctx, f, opts.ID, func(h hubapi.ControlPlane, tenant, id string) (hubapi.Page[hubapi.Delivery], error) {
		return h.ListDeliveries(ctx, tenant, id, opts.Params)
	})
	if err != nil {
		return err
	}
	return output.PrintPage(output.New(f.IOStreams, opts.Format), page, deliveries.ListHeader,
		func(t *output.TableWriter, d hubapi.Delivery) { deliveries.ListRow(t, f, d) },
		"deliveries", opts.Next)
}

// nextPageCommand repeats the listing's own selection, so that the hint on
// stderr continues the same listing.
func nextPageCommand(cmd *cobra.Command, id, state string, limit int) string {
	next := "hubctl subs deliveries " + id
	if state != "" {
		next += " --state " + state
	}
	return next + cmdutil.RepeatLimit(cmd, limit)
}
