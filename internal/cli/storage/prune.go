package storage

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// PruneOptions is `hubctl storage prune` parsed.
type PruneOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	DryRun  bool
}

// NewCmdPrune returns `hubctl storage prune`; a non-nil runF replaces the
// real run.
func NewCmdPrune(f *cmdutil.Factory, runF func(*PruneOptions) error) *cobra.Command {
	var format string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "prune [--dry-run]",
		Short: "Remove what retention no longer keeps, now",
		Long: `Run retention now, as hubctl serve does on its interval: create the
partitions of today and the days ahead, then drop the partitions older than
the retention settings, except those a pending, in-flight or dead job still
needs, and print what was removed. --dry-run only prints what would be.

One process prunes at a time: while another is pruning, this exits 1 and
nothing changes.`,
		Example: "  hubctl storage prune --dry-run\n  hubctl storage prune",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &PruneOptions{Factory: f, Format: fm, DryRun: dryRun}, runF, pruneRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, "")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only print what a prune would remove")
	return cmd
}

func pruneRun(ctx context.Context, opts *PruneOptions) error {
	res, err := hubaccess.Call(ctx, opts.Factory, func(h hubapi.ControlPlane) (hubapi.StoragePruneResult, error) {
		return h.PruneStorage(ctx, opts.DryRun)
	})
	if err != nil {
		return err
	}
	if err := output.New(opts.Factory.IOStreams, opts.Format).Print(res, func(t *output.TableWriter) {
		t.Header("table", "partition", "removed", "rows", "size")
		for _, r := range res.Removed {
			what := "expired rows"
			if r.Whole {
				what = "whole partition"
			}
			t.Row(r.Table, r.Partition, what, strconv.FormatInt(r.Rows, 10), output.Bytes(r.Bytes))
		}
	}); err != nil {
		return err
	}
	if opts.Format == output.Table {
		printKept(opts.Factory, res.Kept, res.ExpiredCursors)
		verb := "removed"
		if res.DryRun {
			verb = "would remove (dry run)"
		}
		fmt.Fprintf(opts.Factory.IOStreams.ErrOut, "prune %s %d partitions or row sets\n", verb, len(res.Removed))
	}
	return nil
}
