package subs_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

func TestSubscriptionsAddressedByName(t *testing.T) {
	dsn := pgtest.DSN(t)
	env := clitest.With(clitest.Direct(dsn), map[string]string{"HUBCTL_TENANT": "acme"})
	if r := clitest.Run(t, clitest.Direct(dsn), "tenants", "create", "acme"); r.Code != 0 {
		t.Fatalf("create tenant: exit %d: %s", r.Code, r.Stderr)
	}
	create := func(name string) string {
		t.Helper()
		r := clitest.Run(t, env, "subs", "create", "--name", name, "--type", "pull", "--allow-duplicate-name", "-o", "json")
		var sub struct{ ID string }
		if err := json.Unmarshal([]byte(r.Stdout), &sub); r.Code != 0 || err != nil {
			t.Fatalf("create %s: exit %d: %s", name, r.Code, r.Stderr)
		}
		return sub.ID
	}
	solo := create("solo")
	dup1, dup2 := create("twin"), create("twin")

	for _, verb := range [][]string{{"get"}, {"disable"}, {"enable"}, {"update", "--origin", "midaz"}, {"verify"}} {
		args := append([]string{"subs", verb[0], "solo", "-o", "json"}, verb[1:]...)
		r := clitest.Run(t, env, args...)
		if r.Code != 0 || !strings.Contains(r.Stdout, `"id":"`+solo+`"`) && !strings.Contains(r.Stdout, `"id": "`+solo+`"`) {
			t.Errorf("%v: exit %d, stdout %s, stderr %s; want subscription %s", args, r.Code, r.Stdout, r.Stderr, solo)
		}
	}
	if r := clitest.Run(t, env, "subs", "deliveries", "solo", "-o", "json"); r.Code != 0 {
		t.Errorf("deliveries by name: exit %d: %s", r.Code, r.Stderr)
	}

	r := clitest.Run(t, env, "subs", "get", "twin")
	if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, dup1) || !strings.Contains(r.Stderr, dup2) || r.Stdout != "" {
		t.Errorf("ambiguous name: exit %d, stderr %q; want %d naming %s and %s", r.Code, r.Stderr, cmdutil.ExitUsage, dup1, dup2)
	}
	r = clitest.Run(t, env, "subs", "delete", "nobody", "--yes")
	if r.Code != cmdutil.ExitNotFound || !strings.Contains(r.Stderr, `"nobody"`) {
		t.Errorf("unknown name: exit %d, stderr %q; want %d", r.Code, r.Stderr, cmdutil.ExitNotFound)
	}
	if r := clitest.Run(t, env, "subs", "delete", "solo", "--yes", "-o", "json"); r.Code != 0 || !strings.Contains(r.Stdout, solo) {
		t.Errorf("delete by name: exit %d, stdout %s, stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := clitest.Run(t, env, "subs", "get", solo); r.Code != cmdutil.ExitNotFound {
		t.Errorf("get after delete by name: exit %d, want %d", r.Code, cmdutil.ExitNotFound)
	}
}

func TestCreateRefusesANameAnotherSubscriptionHas(t *testing.T) {
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			first := idOf(t, mustRun(t, m.env, "", "subs", "create", "--name", "feed", "--type", "pull", "-o", "json"))
			r := clitest.Run(t, m.env, "subs", "create", "--name", "feed", "--type", "pull", "-o", "json")
			if r.Code != cmdutil.ExitFailure || r.Stdout != "" || !strings.Contains(r.Stderr, first) ||
				!strings.Contains(r.Stderr, "--allow-duplicate-name") || strings.Contains(r.Stderr, `tenant ""`) {
				t.Errorf("second create of the name: exit %d, stdout %q, stderr %q; want %d naming %s and the flag", r.Code, r.Stdout, r.Stderr, cmdutil.ExitFailure, first)
			}
			r = clitest.RunWithStdin(t, m.env, `{"name": "feed", "sink": {"type": "pull"}}`, "subs", "create", "--from-file", "-")
			if r.Code != cmdutil.ExitFailure {
				t.Errorf("second create of the name from a file: exit %d, stderr %q", r.Code, r.Stderr)
			}
			if got := clitest.Run(t, m.env, "subs", "get", "feed", "-o", "json"); got.Code != 0 || !strings.Contains(got.Stdout, first) {
				t.Errorf("the refused creates made the name ambiguous: exit %d, %s", got.Code, got.Stderr)
			}

			second := idOf(t, mustRun(t, m.env, "", "subs", "create", "--name", "feed", "--type", "pull", "--allow-duplicate-name", "-o", "json"))
			if second == first {
				t.Fatalf("--allow-duplicate-name returned the first subscription")
			}
			// A deleted subscription's name is free again.
			mustRun(t, m.env, "", "subs", "delete", first, "--yes")
			mustRun(t, m.env, "", "subs", "delete", second, "--yes")
			mustRun(t, m.env, "", "subs", "create", "--name", "feed", "--type", "pull", "-o", "json")
		})
	}
}
