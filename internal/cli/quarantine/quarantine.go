// Package quarantine implements `hubctl quarantine`: reading the poison
// records ingest kept for forensics (docs/concepts.md, Verdicts), through the API or directly
// on the database (hubaccess).
package quarantine

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/output"
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
	cmd.AddCommand(NewCmdList(f, nil))
	return cmd
}

// Table cells show at most this much of any value taken from a record; the
// whole record is in -o json.
const (
	keyWidth     = 24
	headersWidth = 96
	detailWidth  = 120
)

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
