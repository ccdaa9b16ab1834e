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
		Short: "Publish CloudEvents to Kafka as the platform's producers do",
		Long: `Feed a hub by hand or under load: publish CloudEvents to Kafka exactly as
the platform's services do, so they travel the hub's whole ingest path.`,
		Example: `  hubctl events produce --tenant acme --type transaction.posted`,
	}
	cmd.AddCommand(NewCmdProduce(f, nil))
	return cmd
}
