package subs

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestListFitsAnEightyColumnTerminal(t *testing.T) {
	f, out := cmdtest.Terminal(80)
	sub := hubapi.Subscription{
		ID: "0190b6a2-7c1e-7d3a-9f00-000000000001", Name: "orders-ledger-reconciliation-eu-west",
		Sink:       map[string]any{"type": "webhook", "url": "https://hooks.payments.acme.example/ledger/v2/transactions"},
		EventTypes: []string{"transaction.posted", "transaction.reverted", "account.*"}, Enabled: true,
		VerificationState: "active",
	}
	page := hubapi.Page[hubapi.Subscription]{Items: []hubapi.Subscription{sub, sub}}
	if err := output.PrintPage(output.New(f.IOStreams, output.Table), page, subscriptionHeader,
		func(t *output.TableWriter, s hubapi.Subscription) { subscriptionRow(t, f, s) }, "subscriptions", ""); err != nil {
		t.Fatal(err)
	}
	cmdtest.RequireFits(t, out.String(), 80)
	for _, want := range []string{sub.ID, "orders-ledger", "enabled"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
}

func TestListWithCountsFitsAnEightyColumnTerminal(t *testing.T) {
	for _, width := range []int{80, 200} {
		f, out := cmdtest.Terminal(width)
		sub := hubapi.Subscription{
			ID: "0190b6a2-7c1e-7d3a-9f00-000000000001", Name: "orders-ledger-reconciliation-eu-west",
			Sink:       map[string]any{"type": "webhook", "url": "https://hooks.payments.acme.example/ledger/v2/transactions"},
			EventTypes: []string{"transaction.posted", "account.*"}, Enabled: true, VerificationState: "active",
		}
		counts := []hubapi.SubscriptionDeliveryCounts{{Delivered: 950, Failed: 3, Dead: 2}, {Delivered: 1000, Sampled: true}}
		page := hubapi.Page[listedSubscription]{Items: []listedSubscription{{sub, &counts[0]}, {sub, &counts[1]}}}
		if err := output.PrintPage(output.New(f.IOStreams, output.Table), page, func(t *output.TableWriter) { subscriptionColumns(t, countsColumn) },
			func(t *output.TableWriter, row listedSubscription) {
				subscriptionRow(t, f, row.Subscription, countsCell(*row.Last24h))
			}, "subscriptions", ""); err != nil {
			t.Fatal(err)
		}
		cmdtest.RequireFits(t, out.String(), width)
		wants := []string{sub.ID, "enabled"}
		if width == 200 {
			wants = append(wants, "24H OK/FAILED/DEAD", "950/3/2", "1000+ (1000/0/0)")
		}
		for _, want := range wants {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%d columns: list lacks %q:\n%s", width, want, out)
			}
		}
	}
}
