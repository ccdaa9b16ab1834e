package tenants_test

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

// unstableKeys hold values that differ between two runs of one scenario.
var unstableKeys = []string{"id", "created_at", "updated_at", "key", "prefix", "last_used_at", "revoked_at"}

// outcome is what a user sees of one command, ids and times aside.
type outcome struct {
	code   int
	stdout string
}

// runScenario runs the steps in order; "{key}" in a step stands for the id
// of the key the scenario created last.
func runScenario(t *testing.T, env map[string]string, steps [][]string) []outcome {
	t.Helper()
	var keyID string
	outcomes := make([]outcome, len(steps))
	for i, step := range steps {
		args := make([]string, len(step))
		for j, a := range step {
			args[j] = strings.ReplaceAll(a, "{key}", keyID)
		}
		r := clitest.Run(t, env, args...)
		if step[1] == "keys" && step[2] == "create" && r.Code == 0 {
			keyID = decode[struct{ ID string }](t, r.Stdout).ID
		}
		outcomes[i] = outcome{code: r.Code, stdout: clitest.Stable(t, r.Stdout, unstableKeys...)}
	}
	return outcomes
}

func TestTenantsAndKeysBehaveTheSameInBothModes(t *testing.T) {
	steps := []struct {
		args     []string
		wantCode int
	}{
		{[]string{"tenants", "create", "acme", "-o", "json"}, 0},
		{[]string{"tenants", "create", "acme", "-o", "json"}, cmdutil.ExitFailure},
		{[]string{"tenants", "create", "no spaces", "-o", "json"}, cmdutil.ExitFailure},
		{[]string{"tenants", "get", "acme", "-o", "json"}, 0},
		{[]string{"tenants", "get", "nobody", "-o", "json"}, cmdutil.ExitNotFound},
		{[]string{"tenants", "deactivate", "acme", "-o", "json"}, 0},
		{[]string{"tenants", "activate", "acme", "-o", "json"}, 0},
		{[]string{"tenants", "activate", "nobody", "-o", "json"}, cmdutil.ExitNotFound},
		{[]string{"tenants", "list", "-o", "json"}, 0},
		{[]string{"tenants", "list", "--cursor", "forged", "-o", "json"}, cmdutil.ExitFailure},
		{[]string{"tenants", "keys", "create", "acme", "--name", "ci", "-o", "json"}, 0},
		{[]string{"tenants", "keys", "create", "acme", "-o", "json"}, cmdutil.ExitUsage},
		{[]string{"tenants", "keys", "create", "nobody", "--name", "ci", "-o", "json"}, cmdutil.ExitNotFound},
		{[]string{"tenants", "keys", "list", "acme", "-o", "json"}, 0},
		{[]string{"tenants", "keys", "revoke", "acme", "{key}", "-o", "json"}, 0},
		{[]string{"tenants", "keys", "revoke", "acme", "{key}", "-o", "json"}, 0},
		{[]string{"tenants", "keys", "revoke", "acme", "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b", "-o", "json"}, cmdutil.ExitNotFound},
		{[]string{"tenants", "keys", "list", "acme", "-o", "json"}, 0},
	}
	args := make([][]string, len(steps))
	for i, s := range steps {
		args[i] = s.args
	}

	direct := runScenario(t, clitest.Database(pgtest.DSN(t)), args)
	remote := runScenario(t, clitest.Remote(clitest.Serve(t, pgtest.DSN(t)), clitest.AdminToken), args)
	for i, s := range steps {
		if direct[i].code != s.wantCode || remote[i].code != s.wantCode {
			t.Errorf("%v: exit %d directly, %d through the API; want %d", s.args, direct[i].code, remote[i].code, s.wantCode)
		}
		if direct[i].stdout != remote[i].stdout {
			t.Errorf("%v: outputs differ\n direct: %s\n API:    %s", s.args, direct[i].stdout, remote[i].stdout)
		}
	}
	// The revoked key's state shows in the listing.
	if last := direct[len(direct)-1].stdout; !strings.Contains(last, `"revoked_at":"(set)"`) {
		t.Errorf("final key list shows no revocation: %s", last)
	}
}

func TestKeyCreatePrintsTheKeyOnceWithAWarning(t *testing.T) {
	db := clitest.Database(pgtest.DSN(t))
	if r := clitest.Run(t, db, "tenants", "create", "acme"); r.Code != 0 {
		t.Fatalf("create: exit %d: %s", r.Code, r.Stderr)
	}
	r := clitest.Run(t, db, "tenants", "keys", "create", "acme", "--name", "ci", "-o", "table")
	if r.Code != 0 || !strings.Contains(r.Stderr, "will not be shown again") {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], " ci ") {
		t.Errorf("table:\n%s", r.Stdout)
	}
	list := clitest.Run(t, db, "tenants", "keys", "list", "acme", "-o", "table")
	key := strings.Fields(lines[1])[2]
	if list.Code != 0 || strings.Contains(list.Stdout, key) || !strings.Contains(list.Stdout, "active") {
		t.Errorf("list must show the key's state but never the key:\n%s", list.Stdout)
	}
}

func TestRemoteAuthorization(t *testing.T) {
	dsn := pgtest.DSN(t)
	url := clitest.Serve(t, dsn)
	admin := clitest.Remote(url, clitest.AdminToken)
	if r := clitest.Run(t, admin, "tenants", "create", "acme"); r.Code != 0 {
		t.Fatalf("create: exit %d: %s", r.Code, r.Stderr)
	}
	r := clitest.Run(t, admin, "tenants", "keys", "create", "acme", "--name", "ci", "-o", "json")
	key := decode[struct{ ID, Key string }](t, r.Stdout)
	tenantKey := clitest.Remote(url, key.Key)

	cases := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
	}{
		{"tenant key on the admin API", tenantKey, []string{"tenants", "list"}, cmdutil.ExitUnauthorized},
		{"wrong token", clitest.Remote(url, "not-the-token"), []string{"tenants", "list"}, cmdutil.ExitUnauthorized},
		{"no token", map[string]string{"HUBCTL_SERVER": url}, []string{"tenants", "list"}, cmdutil.ExitUnauthorized},
		{"tenant key on its own subscriptions", tenantKey, []string{"subs", "list"}, 0},
		{"revoke it", admin, []string{"tenants", "keys", "revoke", "acme", key.ID}, 0},
		{"revoked key", tenantKey, []string{"subs", "list"}, cmdutil.ExitUnauthorized},
		{"unreachable server", clitest.Remote("http://127.0.0.1:1", clitest.AdminToken), []string{"tenants", "list"}, cmdutil.ExitUnavailable},
		{"server that is not a URL", clitest.Remote("ftp://hub", clitest.AdminToken), []string{"tenants", "list"}, cmdutil.ExitUsage},
		{"--server overrides the environment", tenantKey, []string{"tenants", "list", "--server", url, "--token", clitest.AdminToken}, 0},
	}
	for _, c := range cases {
		r := clitest.Run(t, c.env, c.args...)
		if r.Code != c.wantCode {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.name, r.Code, c.wantCode, r.Stderr)
		}
		if strings.Contains(r.Stderr, clitest.AdminToken) || strings.Contains(r.Stderr, key.Key) {
			t.Errorf("%s: a token leaked into stderr: %q", c.name, r.Stderr)
		}
	}
}
