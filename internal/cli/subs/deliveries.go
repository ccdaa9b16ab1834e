package subs

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/deliveries"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func newDeliveriesCmd(f *cmdutil.Factory) *cobra.Command {
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

Exits 3 when the tenant has no subscription with that id.`, service.MaxPageLimit, states),
		Example: `  hubctl subs deliveries 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b
  hubctl subs deliveries 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --state dead --limit 20 -o json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := resolveFormat(f, format)
			if err != nil {
				return err
			}
			if limit < 1 || limit > service.MaxPageLimit {
				return cmdutil.UsageErrorf("invalid --limit %d: must be between 1 and %d", limit, service.MaxPageLimit)
			}
			if state != "" && !slices.Contains(hubapi.DeliveryStates, state) {
				return cmdutil.UsageErrorf("invalid --state %q: use one of %s", state, states)
			}
			params := service.DeliveryListParams{ListParams: service.ListParams{Limit: limit, Cursor: cursor}, State: state}
			var page hubapi.Page[hubapi.Delivery]
			err = run(cmd.Context(), f, func(h hubaccess.Hub, tenant string) (err error) {
				page, err = h.ListDeliveries(cmd.Context(), tenant, args[0], params)
				return err
			})
			if err != nil {
				return err
			}
			err = output.New(f.IOStreams, fm).Print(page, func(t *output.TableWriter) {
				deliveries.ListHeader(t)
				for _, d := range page.Items {
					deliveries.ListRow(t, f, d)
				}
			})
			if err == nil && fm == output.Table && page.NextCursor != nil {
				_, err = fmt.Fprintf(f.IOStreams.ErrOut, "More deliveries follow: %s --cursor %s\n", nextPageCommand(cmd, args[0], state, limit), *page.NextCursor)
			}
			return err
		},
	}
	addOutputFlag(cmd, &format)
	cmd.Flags().StringVar(&state, "state", "", "only deliveries in this state: "+states)
	cmd.Flags().IntVar(&limit, "limit", service.DefaultPageLimit, fmt.Sprintf("most deliveries to list (1-%d)", service.MaxPageLimit))
	cmd.Flags().StringVar(&cursor, "cursor", "", "continue a listing from the next_cursor of its previous page")
	return cmd
}

// nextPageCommand repeats the listing's own selection, so that the hint on
// stderr continues the same listing.
func nextPageCommand(cmd *cobra.Command, id, state string, limit int) string {
	next := "hubctl subs deliveries " + id
	if state != "" {
		next += " --state " + state
	}
	if cmd.Flags().Changed("limit") {
		next += fmt.Sprintf(" --limit %d", limit)
	}
	return next
}
