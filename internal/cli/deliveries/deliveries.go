// Package deliveries implements `hubctl deliveries`: one delivery of an
// event to a subscription and every attempt it made (docs/concepts.md, Dispatch), through the
// API or directly on the database (hubaccess). It also holds the delivery
// tables that `hubctl subs deliveries` prints.
package deliveries

import (
	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
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
	cmd.AddCommand(NewCmdGet(f, nil))
	return cmd
}
