package events

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
	e := hubapi.InboxEvent{ID: "0190b6a2-7c1e-7d3a-9f00-000000000001", Type: "transaction.balance-config-changed",
		Source: "midaz-transaction-service.eu-west-1", Subject: "ledger/0190b6a2-7c1e-7d3a-9f00-0000000000aa",
		ReceivedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), SizeBytes: 1048576}
	page := hubapi.Page[hubapi.InboxEvent]{Items: []hubapi.InboxEvent{e, e}}
	if err := output.PrintPage(output.New(f.IOStreams, output.Table), page, eventHeader, eventRow, "events", ""); err != nil {
		t.Fatal(err)
	}
	cmdtest.RequireFits(t, out.String(), 80)
	for _, want := range []string{e.ID, "transaction."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
}
