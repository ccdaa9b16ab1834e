package migrate_test

import (
	"encoding/json"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type status struct {
	Current  uint   `json:"current"`
	Latest   uint   `json:"latest"`
	Pending  []uint `json:"pending"`
	UpToDate bool   `json:"up_to_date"`
}

// TestUpDownUpThroughTheCLI drives the operator's commands on an empty
// database: status reports pending work and exits 1 so a deploy script can
// gate on it; up, down --all and up again leave the states they say.
func TestUpDownUpThroughTheCLI(t *testing.T) {
	env := clitest.Database(pgtest.EmptyDSN(t))
	statusIs := func(wantCode int, wantUpToDate bool) status {
		t.Helper()
		res := clitest.Run(t, env, "migrate", "status", "-o", "json")
		var st status
		if err := json.Unmarshal([]byte(res.Stdout), &st); err != nil {
			t.Fatalf("status output %q: %v (stderr %q)", res.Stdout, err, res.Stderr)
		}
		if res.Code != wantCode || st.UpToDate != wantUpToDate {
			t.Fatalf("status: exit %d, %+v; want exit %d, up to date %v", res.Code, st, wantCode, wantUpToDate)
		}
		return st
	}

	if st := statusIs(1, false); st.Current != 0 || len(st.Pending) == 0 {
		t.Fatalf("empty database: %+v", st)
	}
	for _, args := range [][]string{{"migrate", "up"}, {"migrate", "down", "--all"}, {"migrate", "up"}} {
		if res := clitest.Run(t, env, args...); res.Code != 0 {
			t.Fatalf("%v: exit %d: %s", args, res.Code, res.Stderr)
		}
	}
	if st := statusIs(0, true); st.Current != st.Latest {
		t.Fatalf("after up: %+v", st)
	}
	if res := clitest.Run(t, env, "migrate", "down", "--all", "--steps", "1"); res.Code != 2 {
		t.Errorf("--all with --steps: exit %d, want 2", res.Code)
	}
}
