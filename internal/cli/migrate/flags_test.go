package migrate

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/store/pg"
)

func TestDownParsesHowFarToRollBack(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		wantSteps int
		wantUsage bool
	}{
		{args: nil, wantSteps: 1},
		{args: []string{"--steps", "3"}, wantSteps: 3},
		{args: []string{"--all"}, wantSteps: 0},
		{args: []string{"--steps", "0"}, wantUsage: true},
		{args: []string{"--all", "--steps", "1"}, wantUsage: true},
	} {
		f, _, _, _ := cmdtest.Factory(nil)
		var got *DownOptions
		err := cmdtest.Exec(t, f, NewCmdDown(f, func(o *DownOptions) error { got = o; return nil }), tc.args...)
		if tc.wantUsage {
			if cmdutil.ExitCode(err) != cmdutil.ExitUsage || got != nil {
				t.Errorf("%q: exit %d, ran %v; want a usage error before running", tc.args, cmdutil.ExitCode(err), got != nil)
			}
			continue
		}
		if err != nil || got == nil || got.Steps != tc.wantSteps {
			t.Errorf("%q: err %v, options %+v; want steps %d", tc.args, err, got, tc.wantSteps)
		}
	}
}

func TestForceTakesAMigrationNumber(t *testing.T) {
	f, _, _, _ := cmdtest.Factory(nil)
	var got *ForceOptions
	if err := cmdtest.Exec(t, f, NewCmdForce(f, func(o *ForceOptions) error { got = o; return nil }), "3"); err != nil || got == nil || got.Version != 3 {
		t.Fatalf("force 3: err %v, options %+v", err, got)
	}
	for _, arg := range []string{"-1", "three"} {
		err := cmdtest.Exec(t, f, NewCmdForce(f, func(*ForceOptions) error { t.Errorf("%q ran", arg); return nil }), "--", arg)
		if cmdutil.ExitCode(err) != cmdutil.ExitUsage {
			t.Errorf("force %q: exit %d, want usage", arg, cmdutil.ExitCode(err))
		}
	}
}

func TestStatusTableNamesTheState(t *testing.T) {
	for _, tc := range []struct {
		st   pg.SchemaStatus
		want string
	}{
		{pg.SchemaStatus{Current: 2, Latest: 2}, "up to date"},
		{pg.SchemaStatus{Current: 1, Latest: 2, Pending: []uint{2}}, "pending"},
		{pg.SchemaStatus{Current: 1, Latest: 2, Dirty: true}, "dirty"},
	} {
		ios, _, out, _ := iostreams.Test()
		if err := printStatus(output.New(ios, output.Table), tc.st); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("%+v printed %q, want %q", tc.st, out.String(), tc.want)
		}
	}
}
