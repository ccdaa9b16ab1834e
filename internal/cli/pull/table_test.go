package pull

import (
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Rows of --follow are printed as they come: as seqs grow from a day's
// first to the largest the hub hands out, and with long producer values,
// every row stays under its header within 80 columns.
func TestFollowTableStaysAlignedAsSeqGrows(t *testing.T) {
	for _, width := range []int{80, 120, 200} {
		f, out := cmdtest.Terminal(width)
		print := newPrinter(f, output.Table)
		at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.FixedZone("BRT", -3*3600))
		for _, seq := range []int64{1, 9, 10, 99_999, 158_329_674_399_744, 1<<53 - 1} {
			e := hubapi.PullEvent{Seq: seq, Time: at, Type: "transaction.balance-config-changed",
				CEID: "0190b6a2-7c1e-7d3a-9f00-000000000001", Source: "midaz-transaction-service.eu-west-1"}
			if err := print(e); err != nil {
				t.Fatal(err)
			}
		}
		cmdtest.RequireFits(t, out.String(), width)
		if !strings.Contains(out.String(), "9007199254740991") || !strings.Contains(out.String(), "0190b6a2-7c1e-7d3a-9f00-000000000001") {
			t.Errorf("at %d columns seqs and ce ids stay whole:\n%s", width, out)
		}
	}
}
