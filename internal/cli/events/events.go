// Package events implements `hubctl events`: tools that talk to Kafka the
// way the platform's services do, to feed a hub by hand or under load.
package events

import (
	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
)

// NewCmd returns `hubctl events`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Publish CloudEvents to Kafka, and look up the events a hub stored",
		Long: `Feed a hub by hand or under load: publish CloudEvents to Kafka exactly as
the platform's services do, so they travel the hub's whole ingest path
(produce). And find what the hub made of them: search the tenant's stored
events (list) and show one with every delivery of it (get).

Through the API (--server) get and list act on the tenant of a tenant API
key, or, with the admin token, on the tenant named by --tenant. Directly on
the database (--database-url) --tenant is always required.`,
		Example: `  hubctl events produce --tenant acme --type transaction.posted
  hubctl events list --type transaction.posted --since 2026-12-01T00:00:00Z
  hubctl events get 0190b6a2-7c1e-7d3a-9f00-00000000002a`,
	}
	cmd.AddCommand(NewCmdProduce(f, nil), NewCmdTrigger(f, nil), NewCmdGet(f, nil), NewCmdList(f, nil))
	return cmd
}
