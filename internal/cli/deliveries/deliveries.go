// Package deliveries implements `hubctl deliveries`: one delivery of an
// event to a subscription and every attempt it made (SPEC §3.1), through the
// API or directly on the database (hubaccess). It also holds the delivery
// tables that `hubctl subs deliveries` prints.
package deliveries

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// NewCmd returns `hubctl deliveries`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "deliveries",
		Short: "Inspect deliveries and their attempts",
		Long: `Inspect deliveries: one event on its way to one subscription, with every
attempt made to deliver it. hubctl subs deliveries lists a subscription's
deliveries; hubctl deliveries get shows one with its attempts.

Through the API (--server) the commands act on the tenant of a tenant API
key, or, with the admin token, on the tenant named by --tenant. Directly on
the database (--database-url) --tenant is always required. HUBCTL_TENANT
stands in for --tenant.`,
		Example: `  hubctl subs deliveries 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --state dead
  hubctl deliveries get 0196a1c3-0a1b-7c2d-8e3f-405162738495`,
	}
	cmd.PersistentFlags().String(hubaccess.FlagTenant, "", "tenant to act on ("+hubaccess.EnvTenant+"); required on the database and with the admin token")
	cmd.AddCommand(newGetCmd(f))
	return cmd
}

func newGetCmd(f *cmdutil.Factory) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "Show a delivery and every attempt it made",
		Long: `Show one delivery: its state, the event it carries and, oldest first, each
attempt made to deliver it, with the X-Lerian-Delivery-Id the destination
received, when it started, how long it took, the status the destination
answered and the error. -o json and -o yaml add the start of each answer's
body (text, or base64 with response_encoding).

Exits 3 when the tenant has no delivery with that id.`,
		Example: `  hubctl deliveries get 0196a1c3-0a1b-7c2d-8e3f-405162738495
  hubctl deliveries get 0196a1c3-0a1b-7c2d-8e3f-405162738495 --tenant acme -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			detail, err := hubaccess.CallForTenant(cmd.Context(), f, func(h hubaccess.Hub, tenant string) (hubapi.DeliveryDetail, error) {
				return h.GetDelivery(cmd.Context(), tenant, args[0])
			})
			if err != nil {
				return err
			}
			return printDetail(f, fm, detail)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	return cmd
}

// printDetail shows the summary above the attempts in a table; the encoded
// forms are the API's DeliveryDetail as it is.
func printDetail(f *cmdutil.Factory, fm output.Format, detail hubapi.DeliveryDetail) error {
	out := f.IOStreams.Out
	if fm == output.Table {
		if err := writeSummary(out, f, detail.Delivery); err != nil {
			return err
		}
		if len(detail.AttemptHistory) == 0 {
			_, err := fmt.Fprintln(out, "\nNo attempts yet.")
			return err
		}
		if _, err := fmt.Fprintln(out); err != nil {
			return err
		}
	}
	return output.New(f.IOStreams, fm).Print(detail, func(t *output.TableWriter) {
		attemptsTable(t, f, detail.AttemptHistory)
	})
}
