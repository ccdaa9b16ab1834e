package deliveries_test

import (
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/deliveries"
	"github.com/hubctl/hubctl/internal/cli/output"
)

func TestGetTakesOneIDAndAFormat(t *testing.T) {
	f, _, _, _ := cmdtest.Factory(nil)
	var got *deliveries.GetOptions
	if err := cmdtest.Exec(t, f, deliveries.NewCmdGet(f, func(o *deliveries.GetOptions) error { got = o; return nil }), "d1", "-o", "table"); err != nil || got == nil {
		t.Fatalf("err %v, ran %v", err, got != nil)
	}
	if got.ID != "d1" || got.Format != output.Table {
		t.Errorf("options %+v", got)
	}
	for _, args := range [][]string{nil, {"d1", "d2"}, {"d1", "-o", "csv"}} {
		err := cmdtest.Exec(t, f, deliveries.NewCmdGet(f, func(*deliveries.GetOptions) error { t.Errorf("%q ran", args); return nil }), args...)
		if err == nil {
			t.Errorf("%q: no error", args)
		}
		if len(args) == 3 && cmdutil.ExitCode(err) != cmdutil.ExitUsage {
			t.Errorf("%q: exit %d, want 2", args, cmdutil.ExitCode(err))
		}
	}
}
