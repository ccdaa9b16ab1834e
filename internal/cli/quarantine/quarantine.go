// Package quarantine implements `hubctl quarantine`: reading the poison
// records ingest kept for forensics (SPEC §1.2), through the API or directly
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
(a missing or malformed attribute, a duplicated header, an oversized value or
too many or too large headers). Each is kept raw with its reason code, and is
never retried: a malformed record does not become valid on replay. What is
kept is bounded: a value over STREAMING_HUB_MAX_EVENT_BYTES keeps its first
64 KiB with the whole value's size and SHA-256.

list shows a bounded summary of each record; get shows one record whole.

Works through the API with --server and the admin token, or directly on the
database (--database-url).`,
		Example: `  hubctl quarantine list --reason missing_tenantid
  hubctl quarantine get 42 --raw > record.bin`,
	}
	cmd.AddCommand(NewCmdList(f, nil), NewCmdGet(f, nil))
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

func itemRow(t *output.TableWriter, item hubapi.QuarantineSummary) {
	t.Row(
		item.ReceivedAt.Format(time.RFC3339),
		output.SafeText(item.Reason, 0),
		position(item.Topic, item.Partition, item.Offset),
		displayKey(item.Key, item.Encoding, keyWidth),
		compactHeaders(item.Headers, item.HeaderCount, headersWidth),
		output.SafeText(item.Detail, detailWidth),
	)
}

func position(topic string, partition int32, offset int64) string {
	return output.SafeText(topic, 0) + "/" + strconv.Itoa(int(partition)) + "/" + strconv.FormatInt(offset, 10)
}
