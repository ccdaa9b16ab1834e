package storage

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// StatusOptions is `hubctl storage status` parsed.
type StatusOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
}

// NewCmdStatus returns `hubctl storage status`; a non-nil runF replaces the
// real run.
func NewCmdStatus(f *cmdutil.Factory, runF func(*StatusOptions) error) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each table's size, oldest row and what the next prune removes",
		Long: `Show, for each table retention manages, its size on disk (partitions and
indexes), its partitions, the time of its oldest retained row and what the
next prune would remove. For delivery jobs, attempts and event ids the oldest
row is the start of the oldest day that holds rows. Expired partitions that
must stay are listed with the reason, and the number of pull readers the next
prune leaves behind retention.`,
		Example: "  hubctl storage status\n  hubctl storage status -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &StatusOptions{Factory: f, Format: fm}, runF, statusRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, "")
	return cmd
}

func statusRun(ctx context.Context, opts *StatusOptions) error {
	st, err := hubaccess.Call(ctx, opts.Factory, func(h hubapi.ControlPlane) (hubapi.StorageStatus, error) {
		return h.StorageStatus(ctx)
	})
	if err != nil {
		return err
	}
	ios := opts.Factory.IOStreams
	if err := output.New(ios, opts.Format).Print(st, func(t *output.TableWriter) {
		t.Header("table", "size", "partitions", "oldest row", "next prune")
		for _, tb := range st.Tables {
			oldest := "-"
			if tb.OldestRow != nil {
				oldest = tb.OldestRow.Format(time.RFC3339)
			}
			next := "nothing"
			if tb.NextPrune.Rows > 0 || tb.NextPrune.Partitions > 0 {
				next = fmt.Sprintf("%s rows, %s (%s)", strconv.FormatInt(tb.NextPrune.Rows, 10),
					output.Bytes(tb.NextPrune.Bytes), output.Count(tb.NextPrune.Partitions, "partition", "partitions"))
			}
			t.Row(tb.Table, output.Bytes(tb.Bytes), strconv.Itoa(tb.Partitions), oldest, next)
		}
	}); err != nil {
		return err
	}
	if opts.Format == output.Table {
		printKept(opts.Factory, st.Kept, st.ExpiredCursors)
		fmt.Fprintf(ios.ErrOut, "retention: events %s, deliveries %s, quarantine %s\n",
			st.Retention.Events, st.Retention.Deliveries, st.Retention.Quarantine)
	}
	return nil
}

// printKept tells, on stderr beside a table, what retention keeps past
// its time and which readers it leaves behind.
func printKept(f *cmdutil.Factory, kept []hubapi.StorageKept, expiredCursors int64) {
	for _, k := range kept {
		fmt.Fprintf(f.IOStreams.ErrOut, "kept %s (%s): %s\n", k.Partition, k.Table, k.Reason)
	}
	if expiredCursors > 0 {
		fmt.Fprintf(f.IOStreams.ErrOut, "%d pull readers lose unread events to this prune; their next read says events_expired\n", expiredCursors)
	}
}
