package dlq

import (
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestListFitsAnEightyColumnTerminal(t *testing.T) {
	f, out := cmdtest.Terminal(80)
	status := 503
	d := hubapi.DeadLetter{ID: "0190b6a2-7c1e-7d3a-9f00-000000000001", SubscriptionID: "0190b6a2-7c1e-7d3a-9f00-000000000002",
		EventID: "0190b6a2-7c1e-7d3a-9f00-0000000000ff", EventType: "transaction.balance-config-changed",
		Reason: hubapi.DeadSubscriptionDisabled, Attempts: 12, LastStatus: &status, DeadAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	page := hubapi.Page[hubapi.DeadLetter]{Items: []hubapi.DeadLetter{d, d}}
	if err := output.PrintPage(output.New(f.IOStreams, output.Table), page, deadLetterHeader,
		func(t *output.TableWriter, d hubapi.DeadLetter) { deadLetterRow(t, f, d) }, "dead letters", ""); err != nil {
		t.Fatal(err)
	}
	cmdtest.RequireFits(t, out.String(), 80)
	for _, want := range []string{d.ID, d.Reason} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
}
