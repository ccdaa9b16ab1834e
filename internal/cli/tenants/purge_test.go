package tenants_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/tenants"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestPurgeParsesItsFlagsWithoutAHub(t *testing.T) {
	var got *tenants.PurgeOptions
	f := testFactory()
	if err := cmdtest.Exec(t, f, tenants.NewCmdPurge(f, func(o *tenants.PurgeOptions) error { got = o; return nil }), "acme", "--yes"); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.ID != "acme" || !got.Yes {
		t.Errorf("options %+v, want acme with --yes", got)
	}
	got = nil
	if err := cmdtest.Exec(t, f, tenants.NewCmdPurge(f, func(o *tenants.PurgeOptions) error { got = o; return nil }), "no spaces"); err == nil || got != nil {
		t.Errorf("a malformed id: err %v, ran %v; want refused before the hub", err, got != nil)
	}
}

func TestPurgeBehavesTheSameInBothModes(t *testing.T) {
	steps := []struct {
		args     []string
		stdin    string
		wantCode int
	}{
		{[]string{"tenants", "create", "acme", "-o", "json"}, "", 0},
		{[]string{"tenants", "create", "globex", "-o", "json"}, "", 0},
		{[]string{"tenants", "keys", "create", "acme", "--name", "ci", "-o", "json"}, "", 0},
		// Not a terminal and no --yes: refused, nothing removed.
		{[]string{"tenants", "purge", "acme", "-o", "json"}, "acme\n", cmdutil.ExitUsage},
		{[]string{"tenants", "get", "acme", "-o", "json"}, "", 0},
		{[]string{"tenants", "purge", "acme", "--yes", "-o", "json"}, "", 0},
		{[]string{"tenants", "get", "acme", "-o", "json"}, "", cmdutil.ExitNotFound},
		{[]string{"tenants", "get", "globex", "-o", "json"}, "", 0},
		{[]string{"tenants", "purge", "acme", "--yes", "-o", "json"}, "", cmdutil.ExitNotFound},
	}
	run := func(env map[string]string) []outcome {
		out := make([]outcome, len(steps))
		for i, s := range steps {
			r := clitest.RunWithStdin(t, env, s.stdin, s.args...)
			out[i] = outcome{code: r.Code, stdout: clitest.Stable(t, withoutIdempotencyKeys(t, r.Stdout), unstableKeys...)}
			if s.wantCode != r.Code {
				t.Errorf("%v: exit %d, want %d\n%s%s", s.args, r.Code, s.wantCode, r.Stdout, r.Stderr)
			}
		}
		return out
	}
	direct := run(clitest.Database(pgtest.DSN(t)))
	remote := run(clitest.Remote(clitest.Serve(t, pgtest.DSN(t)), clitest.AdminToken))
	for i, s := range steps {
		if direct[i] != remote[i] {
			t.Errorf("%v: outcomes differ\n direct: %+v\n API:    %+v", s.args, direct[i], remote[i])
		}
	}
	purged := decode[hubapi.TenantPurgeResult](t, direct[5].stdout)
	counts := map[string]int64{}
	for _, r := range purged.Removed {
		counts[r.Table] = r.Rows
	}
	if purged.Tenant != "acme" || counts["tenants"] != 1 || counts["tenant_api_keys"] != 1 {
		t.Errorf("purge answered %+v, want acme's tenant row and key removed", purged)
	}
}

// withoutIdempotencyKeys drops the count of Idempotency-Keys from a purge's
// answer: through the API the CLI's creates carry keys, which the purge
// removes with the tenant; in direct mode there are none.
func withoutIdempotencyKeys(t *testing.T, stdout string) string {
	t.Helper()
	if !strings.Contains(stdout, `"removed"`) {
		return stdout
	}
	res := decode[hubapi.TenantPurgeResult](t, stdout)
	res.Removed = slices.DeleteFunc(res.Removed, func(r hubapi.PurgedTable) bool { return r.Table == "idempotency_keys" })
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestPurgeAsksOnATerminal(t *testing.T) {
	f, stdin, _, stderr := cmdtest.Factory(nil)
	f.IOStreams.SetStdinTTY(true)
	stdin.WriteString("not-acme\n")
	err := cmdtest.Exec(t, f, tenants.NewCmdPurge(f, nil), "acme")
	if err == nil || !strings.Contains(err.Error(), "purge canceled") || !strings.Contains(stderr.String(), "Type the tenant id") {
		t.Errorf("a wrong answer: err %v, prompt %q; want the prompt and a canceled purge", err, stderr.String())
	}
}
