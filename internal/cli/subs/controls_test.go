package subs_test

import (
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/subs"
)

func TestCreateSendsOrderingAndRateLimit(t *testing.T) {
	f, _, _, _ := cmdtest.Factory(nil)
	var got *subs.CreateOptions
	err := cmdtest.Exec(t, f, subs.NewCmdCreate(f, func(o *subs.CreateOptions) error { got = o; return nil }),
		"--name", "ledger", "--type", "webhook", "--url", "https://example.test/hook", "--ordering", "subject", "--rate-limit", "12.5")
	if err != nil || got == nil || got.Body.Ordering != "subject" || got.Body.RateLimit == nil || *got.Body.RateLimit != 12.5 {
		t.Fatalf("err %v, options %+v", err, got)
	}
	// Left out, both are the hub's defaults.
	err = cmdtest.Exec(t, f, subs.NewCmdCreate(f, func(o *subs.CreateOptions) error { got = o; return nil }),
		"--name", "ledger", "--type", "webhook", "--url", "https://example.test/hook")
	if err != nil || got.Body.Ordering != "" || got.Body.RateLimit != nil {
		t.Fatalf("err %v, body %+v", err, got.Body)
	}
	if err := cmdtest.Exec(t, f, subs.NewCmdCreate(f, func(*subs.CreateOptions) error { return nil }),
		"--name", "ledger", "--type", "webhook", "--rate-limit", "-1"); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Errorf("--rate-limit -1: %v, want a usage error", err)
	}
}
