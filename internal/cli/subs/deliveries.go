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
			params := service.DeliveryListParams{ListParams: service.ListParams{Limit: limit, Cursor: cursor}, State: state}
			page, err := hubaccess.CallForTenant(cmd.Context(), f, func(h hubaccess.Hub, tenant string) (hubapi.Page[hubapi.Delivery], error) {
				return h.ListDeliveries(cmd.Context(), tenant, args[0], params)
			})
			if err != nil {
				return err
			}
			return output.PrintPage(output.New(f.IOStreams, fm), page, deliveries.ListHeader,
				func(t *output.TableWriter, d hubapi.Delivery) { deliveries.ListRow(t, f, d) },
				"deliveries", nextPageCommand(cmd, args[0], state, limit))
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	cmd.Flags().StringVar(&state, "state", "", "only deliveries in this state: "+states)
	cmdutil.AddPageFlags(cmd, &limit, &cursor, "deliveries")
	return cmd
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
