// Package quarantine implements `hubctl quarantine`: reading the poison
// records ingest kept for forensics (docs/concepts.md, Verdicts), through the API or directly
// on the database (hubaccess).
package quarantine

import (
	"strconv"

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

// The list is a table to scan on an 80-column terminal: which record, when,
// why, where it came from and how big it was. Key, headers and detail are
// what `quarantine get` shows, one record at a time, and -o json has the
// whole summary.
const receivedLayout = "2006-01-02 15:04"

func itemHeader(t *output.TableWriter) {
	t.Columns(
		output.Column{Name: "id", Priority: 9},
		output.Column{Name: "received", Priority: 7},
		output.Column{Name: "reason", Priority: 8, Min: 12},
		// Of a topic/partition/offset the end tells records apart, the
		// shared topic prefix does not.
		output.Column{Name: "where", Priority: 6, Min: 18, KeepEnd: true},
		output.Column{Name: "size", Priority: 5},
	)
}

func itemRow(t *output.TableWriter, item hubapi.QuarantineSummary) {
	t.Row(
		strconv.FormatInt(item.ID, 10),
		item.ReceivedAt.UTC().Format(receivedLayout),
		item.Reason,
		position(item.Topic, item.Partition, item.Offset),
		output.Bytes(item.ValueSize),
	)
}

func position(topic string, partition int32, offset int64) string {
	return output.SafeText(topic, 0) + "/" + strconv.Itoa(int(partition)) + "/" + strconv.FormatInt(offset, 10)
}
