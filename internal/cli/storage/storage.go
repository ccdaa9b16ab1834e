// Package storage implements `hubctl storage`: what the hub stores, how
// old it is, and pruning by the retention settings, through the API or
// directly on the database (hubaccess).
package storage

import (
	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
)

// NewCmd returns `hubctl storage`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "storage",
		Short: "Show what the hub stores and prune it by retention",
		Long: `Every table that grows with traffic (events, event_ids, pull_entries,
delivery_jobs, delivery_attempts, quarantine) is split into daily partitions,
and retention drops whole partitions once they are older than
STREAMING_HUB_RETENTION_EVENTS, _DELIVERIES or _QUARANTINE. hubctl serve does
it every STREAMING_HUB_RETENTION_INTERVAL, one instance at a time; these
commands show it and run it on demand.

An expired partition stays while a pending, in-flight or dead job still needs
one of its events; status lists those under "kept".

These commands go through the API with --server and the admin token, or
directly on the database (--database-url or STREAMING_HUB_POSTGRES_DSN), with
the retention settings of this process.`,
		Example: `  hubctl storage status
  hubctl storage prune --dry-run
  hubctl storage prune -o json`,
	}
	cmd.AddCommand(NewCmdStatus(f, nil), NewCmdPrune(f, nil))
	return cmd
}
