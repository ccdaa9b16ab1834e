package quarantine

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

// ListOptions is `hubctl quarantine list` parsed.
type ListOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	Params  hubapi.QuarantineListParams
	// Next is the command the table's next-page hint repeats.
	Next string
}

// NewCmdList returns `hubctl quarantine list`; a non-nil runF replaces the
// real run.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	var format, cursor string
	var params hubapi.QuarantineListParams
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List quarantined records, newest first",
		Long: fmt.Sprintf(`List quarantined records, newest first, --limit at a time (at most %d),
optionally only those with one reason code or from one topic.

Each record is a summary of bounded size, however large the record: the
key's and the first 16 headers' first bytes, the value's first 64 bytes, its
size and SHA-256. The table shortens further and shows bytes that are not text
as base64; -o json and -o yaml show the summaries, text where it is valid
UTF-8, else base64 with "encoding": "base64" beside it. hubctl quarantine get
shows one record whole. When more records follow, they carry next_cursor and
the table prints the command for the next page on stderr.`, hubapi.MaxPageLimit),
		Example: `  hubctl quarantine list
  hubctl quarantine list --reason invalid_id --limit 20
  hubctl quarantine list --topic lerian.streaming.midaz_transaction.posted -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if err := cmdutil.CheckLimit(params.Limit); err != nil {
				return err
			}
			params.Cursor = cursor
			opts := &ListOptions{Factory: f, Format: fm, Params: params, Next: "hubctl quarantine list" + repeatFilters(cmd, params)}
			return cmdutil.Run(cmd.Context(), opts, runF, listRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".items[].id")
	cmdutil.AddPageFlags(cmd, &params.Limit, &cursor, "records")
	cmd.Flags().StringVar(&params.Reason, "reason", "", "only records quarantined for this reason code, e.g. missing_tenantid")
	cmd.Flags().StringVar(&params.Topic, "topic", "", "only records from this topic")
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	page, err := hubaccess.Call(ctx, opts.Factory, func(h hubapi.ControlPlane) (hubapi.Page[hubapi.QuarantineSummary], error) {
		return h.ListQuarantine(ctx, opts.Params)
	})
	if err != nil {
		return err
	}
	return output.PrintPage(output.New(opts.Factory.IOStreams, opts.Format), page, itemHeader, itemRow, "records", opts.Next)
}

// repeatFilters spells the flags the next page needs besides the cursor: a
// cursor continues one listing, with its filters.
func repeatFilters(cmd *cobra.Command, p hubapi.QuarantineListParams) string {
	s := cmdutil.RepeatLimit(cmd, p.Limit)
	if p.Reason != "" {
		s += " --reason " + strconv.Quote(p.Reason)
	}
	if p.Topic != "" {
		s += " --topic " + strconv.Quote(p.Topic)
	}
	return s
}
