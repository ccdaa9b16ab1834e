package quarantine_test

import (
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/quarantine"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestListParsesFiltersIntoParamsAndTheNextPageHint(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		want     hubapi.QuarantineListParams
		wantNext string
	}{
		{args: nil, want: hubapi.QuarantineListParams{ListParams: hubapi.ListParams{Limit: hubapi.DefaultPageLimit}}, wantNext: "hubctl quarantine list"},
		{
			args:     []string{"--reason", "invalid_id", "--topic", "a b", "--limit", "20", "--cursor", "c"},
			want:     hubapi.QuarantineListParams{ListParams: hubapi.ListParams{Limit: 20, Cursor: "c"}, Reason: "invalid_id", Topic: "a b"},
			wantNext: `hubctl quarantine list --limit 20 --reason "invalid_id" --topic "a b"`,
		},
	} {
		f, _, _, _ := cmdtest.Factory(nil)
		var got *quarantine.ListOptions
		if err := cmdtest.Exec(t, f, quarantine.NewCmdList(f, func(o *quarantine.ListOptions) error { got = o; return nil }), tc.args...); err != nil || got == nil {
			t.Fatalf("%q: err %v, ran %v", tc.args, err, got != nil)
		}
		if got.Params != tc.want || got.Next != tc.wantNext {
			t.Errorf("%q: params %+v next %q, want %+v %q", tc.args, got.Params, got.Next, tc.want, tc.wantNext)
		}
	}
	f, _, _, _ := cmdtest.Factory(nil)
	err := cmdtest.Exec(t, f, quarantine.NewCmdList(f, func(*quarantine.ListOptions) error { t.Error("ran"); return nil }), "--limit", "0")
	if cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Errorf("--limit 0: err %v, want exit 2", err)
	}
}

func TestGetRawIsRefusedOnATerminal(t *testing.T) {
	f, _, _, _ := cmdtest.Factory(nil)
	f.IOStreams.SetStdoutTTY(true)
	err := cmdtest.Exec(t, f, quarantine.NewCmdGet(f, func(*quarantine.GetOptions) error { t.Error("ran"); return nil }), "7", "--raw")
	if cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Errorf("--raw to a terminal: err %v, want exit 2", err)
	}
	f, _, _, _ = cmdtest.Factory(nil)
	var got *quarantine.GetOptions
	if err := cmdtest.Exec(t, f, quarantine.NewCmdGet(f, func(o *quarantine.GetOptions) error { got = o; return nil }), "7", "--raw"); err != nil || got == nil || !got.Raw || got.ID != "7" {
		t.Errorf("--raw to a file: err %v, options %+v", err, got)
	}
}
