package deliveries

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
	status, held := 503, hubapi.HeldBreakerOpen
	d := hubapi.Delivery{ID: "0190b6a2-7c1e-7d3a-9f00-000000000001", EventID: "0190b6a2-7c1e-7d3a-9f00-0000000000ff",
		EventType: "transaction.balance-config-changed", State: hubapi.DeliveryPending, HeldReason: &held,
		Attempts: 12, LastStatus: &status, UpdatedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	page := hubapi.Page[hubapi.Delivery]{Items: []hubapi.Delivery{d, d}}
	if err := output.PrintPage(output.New(f.IOStreams, output.Table), page, ListHeader,
		func(t *output.TableWriter, d hubapi.Delivery) { ListRow(t, f, d) }, "deliveries", ""); err != nil {
		t.Fatal(err)
	}
	cmdtest.RequireFits(t, out.String(), 80)
	for _, want := range []string{d.ID, "pending", "12"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
}

func TestAttemptsFitAnEightyColumnTerminal(t *testing.T) {
	f, out := cmdtest.Terminal(80)
	status, msg := 502, strings.Repeat("upstream connect error or disconnect/reset before headers. ", 3)
	a := hubapi.DeliveryAttempt{ID: "0190b6a2-7c1e-7d3a-9f00-0000000000aa", Attempt: 10, StartedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		DurationMS: 10000, Outcome: hubapi.AttemptFailed, StatusCode: &status, Error: &msg}
	if err := output.New(f.IOStreams, output.Table).Print(nil, func(t *output.TableWriter) {
		attemptsTable(t, f, []hubapi.DeliveryAttempt{a, a})
	}); err != nil {
		t.Fatal(err)
	}
	cmdtest.RequireFits(t, out.String(), 80)
}
