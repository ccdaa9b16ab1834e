package subs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/deliveries"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/when"
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
	var format, cursor, state, since, until string
	var limit int
	states := strings.Join(hubapi.DeliveryStates, ", ")
	cmd := &cobra.Command{
		Use:   "deliveries ID [--state S] [--since T] [--until T] [--limit N]",
		Short: "List a subscription's deliveries, newest first",
		Long: fmt.Sprintf(`List a subscription's deliveries, newest event first, --limit at a time (at
most %d): the event each carries, its state (%s), how many attempts
it made and the status the destination last answered. --since (inclusive)
and --until (exclusive) keep the deliveries created in that window; each
takes an RFC 3339 time or a duration back from now (1h). hubctl deliveries
get shows one delivery's attempts. A deleted subscription's deliveries stay
listed. When more follow, -o json and -o yaml carry next_cursor and the table
prints the command for the next page on stderr.

Exits 3 when the tenant has no subscription with that id.`, hubapi.MaxPageLimit, states),
		Example: `  hubctl subs deliveries 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b
  hubctl subs deliveries 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --state dead --limit 20 -o json
  hubctl subs deliveries 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --state dead --since 1h`,
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
			params := hubapi.DeliveryListParams{ListParams: hubapi.ListParams{Limit: limit, Cursor: cursor}, State: state}
			if params.Since, params.Until, err = deliveryWindow(since, until, time.Now()); err != nil {
				return err
			}
			opts := &DeliveriesOptions{
				Factory: f, Format: fm, ID: args[0], Params: params,
				Next: nextPageCommand(cmd, args[0], params, limit),
			}
			return cmdutil.Run(cmd.Context(), opts, runF, deliveriesRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".items[].id")
	cmd.Flags().StringVar(&state, "state", "", "only deliveries in this state: "+states)
	cmd.Flags().StringVar(&since, "since", "", "only deliveries created at or after this time: RFC 3339, or a duration back from now (1h)")
	cmd.Flags().StringVar(&until, "until", "", "only deliveries created before this time, in the same forms")
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

// deliveryWindow reads --since and --until into the RFC 3339 times the hub
// takes; a duration counts back from now. "" leaves a side open.
func deliveryWindow(since, until string, now time.Time) (sinceAt, untilAt string, err error) {
	var from, to time.Time
	if since != "" {
		if from, err = ParseWhen("since", since, now); err != nil {
			return "", "", err
		}
		sinceAt = when.Format(from)
	}
	if until != "" {
		if to, err = ParseWhen("until", until, now); err != nil {
			return "", "", err
		}
		untilAt = when.Format(to)
	}
	if since != "" && until != "" && !from.Before(to) {
		return "", "", cmdutil.UsageErrorf("--until (%s) must be after --since (%s)", untilAt, sinceAt)
	}
	return sinceAt, untilAt, nil
}

// nextPageCommand repeats the listing's own selection, so that the hint on
// stderr continues the same listing. A window given as a duration is
// repeated as the times it meant, so the next page is of the same window.
func nextPageCommand(cmd *cobra.Command, id string, p hubapi.DeliveryListParams, limit int) string {
	next := "hubctl subs deliveries " + id
	if p.State != "" {
		next += " --state " + p.State
	}
	if p.Since != "" {
		next += " --since " + p.Since
	}
	if p.Until != "" {
		next += " --until " + p.Until
	}
	return next + cmdutil.RepeatLimit(cmd, limit)
}
