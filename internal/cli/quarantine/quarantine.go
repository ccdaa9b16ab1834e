// Package quarantine implements `hubctl quarantine`: reading the poison
// records ingest kept for forensics (SPEC §1.2), through the API or directly
// on the database (hubaccess).
package quarantine

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// NewCmd returns `hubctl quarantine`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quarantine",
		Short: "Inspect the malformed records ingest set aside",
		Long: `Inspect quarantined records: Kafka records that broke a CloudEvents rule
(a missing or malformed attribute, a duplicated header, an oversized value).
Each is kept raw, with every header, its key and value, and the reason code,
and is never retried: a malformed record does not become valid on replay.

Works through the API with --server and the admin token, or directly on the
database (--database-url).`,
		Example: `  hubctl quarantine list --reason missing_tenantid`,
	}
	cmd.AddCommand(newListCmd(f))
	return cmd
}

// Table cells show at most this much of any value taken from a record; the
// whole record is in -o json.
const (
	keyWidth     = 24
	headersWidth = 96
	detailWidth  = 120
)

func newListCmd(f *cmdutil.Factory) *cobra.Command {
	var format, cursor string
	var params service.QuarantineListParams
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List quarantined records, newest first",
		Long: fmt.Sprintf(`List quarantined records, newest first, --limit at a time (at most %d),
optionally only those with one reason code or from one topic.

The table shortens keys, headers and details and shows bytes that are not
text as base64. -o json and -o yaml show each record whole: header values and
the key as text where they are valid UTF-8, else base64 with
"encoding": "base64" beside them, and the value always as value_base64.
When more records follow, they carry next_cursor and the table prints the
command for the next page on stderr.`, service.MaxPageLimit),
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
			page, err := hubaccess.Call(cmd.Context(), f, func(h hubaccess.Hub) (hubapi.Page[hubapi.QuarantineItem], error) {
				return h.ListQuarantine(cmd.Context(), params)
			})
			if err != nil {
				return err
			}
			return output.PrintPage(output.New(f.IOStreams, fm), page, itemHeader, itemRow,
				"records", "hubctl quarantine list"+repeatFilters(cmd, params))
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	cmdutil.AddPageFlags(cmd, &params.Limit, &cursor, "records")
	cmd.Flags().StringVar(&params.Reason, "reason", "", "only records quarantined for this reason code, e.g. missing_tenantid")
	cmd.Flags().StringVar(&params.Topic, "topic", "", "only records from this topic")
	return cmd
}

func itemHeader(t *output.TableWriter) {
	t.Header("received", "reason", "topic/partition/offset", "key", "headers", "detail")
}

func itemRow(t *output.TableWriter, item hubapi.QuarantineItem) {
	t.Row(
		item.ReceivedAt.Format(time.RFC3339),
		displayText(item.Reason, 0),
		displayText(item.Topic, 0)+"/"+strconv.Itoa(int(item.Partition))+"/"+strconv.FormatInt(item.Offset, 10),
		displayKey(item),
		compactHeaders(item.Headers, headersWidth),
		displayText(item.Detail, detailWidth),
	)
}

// repeatFilters spells the flags the next page needs besides the cursor: a
// cursor continues one listing, with its filters.
func repeatFilters(cmd *cobra.Command, p service.QuarantineListParams) string {
	s := cmdutil.RepeatLimit(cmd, p.Limit)
	if p.Reason != "" {
		s += " --reason " + strconv.Quote(p.Reason)
	}
	if p.Topic != "" {
		s += " --topic " + strconv.Quote(p.Topic)
	}
	return s
}
