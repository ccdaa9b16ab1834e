package subs_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// receiver is a webhook destination whose answers the test switches.
type receiver struct {
	url     string
	failing atomic.Bool
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if r.failing.Load() {
			http.Error(w, "receiver down for maintenance", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// mode is one way of reaching a hub that has a tenant "acme".
type mode struct {
	name string
	env  map[string]string
	dsn  string // the mode's database, for what a test stores beside the CLI
}

// modes returns the three ways of acting on acme's subscriptions, each on
// a database of its own: directly, through the API with the admin token
// and --tenant, and through the API with acme's own key.
func modes(t *testing.T) []mode {
	t.Helper()
	setup := func() (dsn string) {
		dsn = pgtest.DSN(t)
		if r := clitest.Run(t, clitest.Direct(dsn), "tenants", "create", "acme"); r.Code != 0 {
			t.Fatalf("create tenant: exit %d: %s", r.Code, r.Stderr)
		}
		return dsn
	}
	directDSN, adminDSN, keyDSN := setup(), setup(), setup()

	keyURL := clitest.Serve(t, keyDSN)
	r := clitest.Run(t, clitest.Direct(keyDSN), "tenants", "keys", "create", "acme", "--name", "test", "-o", "json")
	var key struct{ Key string }
	if err := json.Unmarshal([]byte(r.Stdout), &key); r.Code != 0 || err != nil {
		t.Fatalf("create key: exit %d: %s", r.Code, r.Stderr)
	}
	return []mode{
		{"direct", clitest.With(clitest.Direct(directDSN), map[string]string{"HUBCTL_TENANT": "acme"}), directDSN},
		{"admin token", clitest.With(clitest.Remote(clitest.Serve(t, adminDSN), clitest.AdminToken), map[string]string{"HUBCTL_TENANT": "acme"}), adminDSN},
		{"tenant key", clitest.Remote(keyURL, key.Key), keyDSN},
	}
}

// unstableKeys hold values that differ between two runs of one scenario.
var unstableKeys = []string{"id", "created_at", "updated_at", "signing_secret", "previous_secret_expires_at", "failing_since", "last_failure_at"}

// step is one command of a scenario. "{name}" in args stands for the id a
// previous step saved under name.
type step struct {
	args        []string
	failing     bool   // the receiver fails during this step
	save        string // save the printed subscription's id under this name
	wantCode    int
	wantStdout  []string // fragments of the stable JSON output
	wantStderr  string
	stdoutEmpty bool
}

type outcome struct {
	code           int
	stdout, stderr string
}

func runSteps(t *testing.T, env map[string]string, rcv *receiver, steps []step) []outcome {
	t.Helper()
	saved := map[string]string{}
	outcomes := make([]outcome, len(steps))
	for i, s := range steps {
		args := make([]string, len(s.args))
		for j, a := range s.args {
			for name, id := range saved {
				a = strings.ReplaceAll(a, "{"+name+"}", id)
			}
			args[j] = strings.ReplaceAll(a, "{receiver}", rcv.url)
		}
		rcv.failing.Store(s.failing)
		r := clitest.Run(t, env, args...)
		if s.save != "" && r.Code == 0 {
			var printed struct{ ID string }
			if err := json.Unmarshal([]byte(r.Stdout), &printed); err != nil {
				t.Fatalf("%v: %v\n%s", s.args, err, r.Stdout)
			}
			saved[s.save] = printed.ID
		}
		outcomes[i] = outcome{code: r.Code, stdout: clitest.Stable(t, r.Stdout, unstableKeys...), stderr: r.Stderr}
	}
	rcv.failing.Store(false)
	return outcomes
}

const unknownID = "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b"

func TestSubscriptionsBehaveTheSameInEveryMode(t *testing.T) {
	specFile := filepath.Join(t.TempDir(), "feed.json")
	if err := os.WriteFile(specFile, []byte(`{"name": "from-file", "sink": {"type": "pull"}, "event_types": ["account.*"], "schema_major": 2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := []step{
		{args: []string{"subs", "create", "--name", "feed", "--type", "pull", "-o", "json"}, save: "pull",
			wantStdout: []string{`"sink":{"type":"pull"}`, `"event_types":["*"]`, `"verification_state":"active"`}},
		{args: []string{"subs", "create", "--name", "orders", "--type", "webhook", "--url", "{receiver}",
			"--event-types", "transaction.*,account.posted", "--retry-schedule", "0s,5s,1m", "--attempt-timeout", "5s", "-o", "json"}, save: "hook",
			wantStdout: []string{`"signing_secret":"(set)"`, `"retry_schedule":["0s","5s","1m"]`, `"attempt_timeout":"5s"`, `"verification_state":"active"`},
			wantStderr: "will not be shown again"},
		{args: []string{"subs", "list", "-o", "json"}, wantStdout: []string{`"name":"feed"`, `"name":"orders"`}},
		{args: []string{"subs", "get", "{hook}", "-o", "json"}, wantStdout: []string{`"enabled":true`}},
		{args: []string{"subs", "update", "{hook}", "--name", "renamed", "--origin", "midaz", "-o", "json"},
			wantStdout: []string{`"name":"renamed"`, `"origin":"midaz"`, `"retry_schedule":["0s","5s","1m"]`}},
		{args: []string{"subs", "update", "{hook}", "--origin", "", "--retry-schedule", "", "-o", "json"},
			wantStdout: []string{`"origin":null`, `"name":"renamed"`}},
		// --url alone keeps the sink's type; the new sink is verified again.
		{args: []string{"subs", "update", "{hook}", "--url", "{receiver}/v2", "-o", "json"},
			wantStdout: []string{`/v2"`, `"type":"webhook"`, `"verification_state":"active"`}},
		{args: []string{"subs", "update", "{hook}", "--url", "{receiver}/v3", "-o", "json"}, failing: true,
			wantStdout: []string{`/v3"`, `"verification_state":"failed"`, `"verification_error":"`}},
		{args: []string{"subs", "disable", "{hook}", "-o", "json"}, wantStdout: []string{`"enabled":false`}},
		{args: []string{"subs", "enable", "{hook}", "-o", "json"}, wantStdout: []string{`"enabled":true`}},
		{args: []string{"subs", "verify", "{hook}", "-o", "json"}, failing: true, wantCode: cmdutil.ExitFailure,
			wantStderr: "verification failed", stdoutEmpty: true},
		{args: []string{"subs", "get", "{hook}", "-o", "json"}, wantStdout: []string{`"verification_state":"failed"`}},
		{args: []string{"subs", "verify", "{hook}", "-o", "json"}, wantStdout: []string{`"verification_state":"active"`}},
		{args: []string{"subs", "rotate-secret", "{hook}", "-o", "json"},
			wantStdout: []string{`"signing_secret":"(set)"`, `"previous_secret_expires_at":"(set)"`}, wantStderr: "will not be shown again"},
		{args: []string{"subs", "rotate-secret", "{hook}", "--signing-secret", "too-short"}, wantCode: cmdutil.ExitFailure,
			wantStderr: "at least 24 characters", stdoutEmpty: true},
		{args: []string{"subs", "rotate-secret", "{pull}"}, wantCode: cmdutil.ExitFailure, wantStderr: "does not sign", stdoutEmpty: true},
		{args: []string{"subs", "get", unknownID}, wantCode: cmdutil.ExitNotFound, wantStderr: "not found", stdoutEmpty: true},
		{args: []string{"subs", "delete", unknownID}, wantCode: cmdutil.ExitNotFound, stdoutEmpty: true},
		{args: []string{"subs", "create", "--name", "bad", "--type", "pull", "--event-types", "Not A Type"},
			wantCode: cmdutil.ExitFailure, wantStderr: "event_types", stdoutEmpty: true},
		{args: []string{"subs", "create", "--name", "bad", "--type", "carrier-pigeon"},
			wantCode: cmdutil.ExitFailure, wantStderr: "carrier-pigeon", stdoutEmpty: true},
		{args: []string{"subs", "create", "--name", "bad", "--type", "pull", "--retry-schedule", "11h"},
			wantCode: cmdutil.ExitFailure, stdoutEmpty: true},
		{args: []string{"subs", "delete", "{hook}", "-o", "json"}, wantStdout: []string{`"canceled_jobs":0`}},
		{args: []string{"subs", "get", "{hook}"}, wantCode: cmdutil.ExitNotFound, stdoutEmpty: true},
		{args: []string{"subs", "create", "--from-file", specFile, "-o", "json"}, save: "file",
			wantStdout: []string{`"name":"from-file"`, `"schema_major":2`}},
		{args: []string{"subs", "update", "{file}", "--type", "webhook", "--url", "{receiver}"},
			wantCode: cmdutil.ExitFailure, wantStderr: "type cannot change", stdoutEmpty: true},
		{args: []string{"subs", "list", "-o", "json"}, wantStdout: []string{`"name":"feed"`, `"name":"from-file"`}},
	}

	rcv := newReceiver(t)
	var first []outcome
	var firstMode string
	for _, m := range modes(t) {
		outcomes := runSteps(t, m.env, rcv, steps)
		for i, s := range steps {
			got := outcomes[i]
			if got.code != s.wantCode {
				t.Errorf("%s: %v: exit %d, want %d (stderr %q)", m.name, s.args, got.code, s.wantCode, got.stderr)
			}
			for _, fragment := range s.wantStdout {
				if !strings.Contains(got.stdout, fragment) {
					t.Errorf("%s: %v: output lacks %s:\n%s", m.name, s.args, fragment, got.stdout)
				}
			}
			if !strings.Contains(got.stderr, s.wantStderr) {
				t.Errorf("%s: %v: stderr %q lacks %q", m.name, s.args, got.stderr, s.wantStderr)
			}
			if s.stdoutEmpty && got.stdout != "" {
				t.Errorf("%s: %v: printed %s", m.name, s.args, got.stdout)
			}
			if first != nil && (got.code != first[i].code || got.stdout != first[i].stdout) {
				t.Errorf("%v: %s and %s differ:\n %s: exit %d %s\n %s: exit %d %s", s.args, firstMode, m.name,
					firstMode, first[i].code, first[i].stdout, m.name, got.code, got.stdout)
			}
		}
		if first == nil {
			first, firstMode = outcomes, m.name
		}
	}
}

func TestSubscriptionScopeAndUsage(t *testing.T) {
	dsn := pgtest.DSN(t)
	direct := clitest.Direct(dsn)
	if r := clitest.Run(t, direct, "tenants", "create", "acme"); r.Code != 0 {
		t.Fatalf("create tenant: exit %d: %s", r.Code, r.Stderr)
	}
	if r := clitest.Run(t, direct, "tenants", "create", "other"); r.Code != 0 {
		t.Fatalf("create tenant: exit %d: %s", r.Code, r.Stderr)
	}
	r := clitest.Run(t, direct, "tenants", "keys", "create", "acme", "--name", "test", "-o", "json")
	var key struct{ Key string }
	if err := json.Unmarshal([]byte(r.Stdout), &key); err != nil {
		t.Fatal(err)
	}
	url := clitest.Serve(t, dsn)
	admin := clitest.Remote(url, clitest.AdminToken)
	tenantKey := clitest.Remote(url, key.Key)

	cases := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"direct without --tenant", direct, []string{"subs", "list"}, cmdutil.ExitUsage, "--tenant"},
		{"admin token without --tenant", admin, []string{"subs", "list"}, cmdutil.ExitUsage, "--tenant"},
		{"tenant key without --tenant", tenantKey, []string{"subs", "list"}, 0, ""},
		{"tenant key naming its own tenant", tenantKey, []string{"subs", "list", "--tenant", "acme"}, 0, ""},
		{"tenant key naming another tenant", tenantKey, []string{"subs", "list", "--tenant", "other"}, cmdutil.ExitUnauthorized, ""},
		{"direct on an unknown tenant", direct, []string{"subs", "list", "--tenant", "nobody"}, cmdutil.ExitNotFound, `tenant "nobody" not found`},
		{"admin on an unknown tenant", admin, []string{"subs", "list", "--tenant", "nobody"}, cmdutil.ExitNotFound, `tenant "nobody" not found`},
		{"invalid tenant id", direct, []string{"subs", "list", "--tenant", "a/b"}, cmdutil.ExitFailure, "invalid tenant id"},
		{"unreachable server", clitest.Remote("http://127.0.0.1:1", key.Key), []string{"subs", "list"}, cmdutil.ExitUnavailable, "127.0.0.1:1"},
		{"create without --name", tenantKey, []string{"subs", "create", "--type", "pull"}, cmdutil.ExitUsage, "--name is required"},
		{"--from-file with a field flag", tenantKey, []string{"subs", "create", "--from-file", "x.json", "--name", "n"}, cmdutil.ExitUsage, "cannot be combined"},
		{"--from-file that does not exist", tenantKey, []string{"subs", "create", "--from-file", filepath.Join(t.TempDir(), "none.json")}, cmdutil.ExitUsage, "none.json"},
		{"empty --event-types on update", tenantKey, []string{"subs", "update", unknownID, "--event-types", ""}, cmdutil.ExitUsage, "at least one event type"},
		{"no id", tenantKey, []string{"subs", "get"}, cmdutil.ExitUsage, "accepts 1 arg"},
	}
	for _, c := range cases {
		r := clitest.Run(t, c.env, c.args...)
		if r.Code != c.wantCode || !strings.Contains(r.Stderr, c.wantErr) {
			t.Errorf("%s: exit %d, stderr %q; want %d mentioning %q", c.name, r.Code, r.Stderr, c.wantCode, c.wantErr)
		}
		if strings.Contains(r.Stderr, key.Key) || strings.Contains(r.Stderr, clitest.AdminToken) {
			t.Errorf("%s: a token leaked: %q", c.name, r.Stderr)
		}
	}
}

func TestFromFileOnStdin(t *testing.T) {
	env := clitest.With(clitest.Direct(pgtest.DSN(t)), map[string]string{"HUBCTL_TENANT": "acme"})
	if r := clitest.Run(t, env, "tenants", "create", "acme"); r.Code != 0 {
		t.Fatalf("create tenant: exit %d: %s", r.Code, r.Stderr)
	}
	r := clitest.RunWithStdin(t, env, `{"name": "feed", "sink": {"type": "pull"}, "event_types": ["*"]}`, "subs", "create", "--from-file", "-", "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"name": "feed"`) {
		t.Errorf("exit %d: %s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunWithStdin(t, env, `{"name": "feed", "colour": "blue"}`, "subs", "create", "--from-file", "-")
	if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "colour") {
		t.Errorf("unknown field: exit %d: %s", r.Code, r.Stderr)
	}
}

func TestCompletionListsTheTenantsSubscriptions(t *testing.T) {
	env := clitest.With(clitest.Direct(pgtest.DSN(t)), map[string]string{"HUBCTL_TENANT": "acme"})
	if r := clitest.Run(t, env, "tenants", "create", "acme"); r.Code != 0 {
		t.Fatalf("create tenant: exit %d: %s", r.Code, r.Stderr)
	}
	r := clitest.Run(t, env, "subs", "create", "--name", "feed", "--type", "pull", "-o", "json")
	var created struct{ ID string }
	if err := json.Unmarshal([]byte(r.Stdout), &created); err != nil {
		t.Fatalf("create: %v: %s", err, r.Stderr)
	}
	r = clitest.Run(t, env, "__complete", "subs", "get", "")
	if r.Code != 0 || !strings.Contains(r.Stdout, created.ID+"\tfeed") {
		t.Errorf("completion: exit %d:\n%s", r.Code, r.Stdout)
	}
	// Without a hub it completes nothing, quietly.
	r = clitest.Run(t, nil, "__complete", "subs", "get", "")
	if r.Code != 0 || strings.Contains(r.Stdout, "Error") || strings.Count(r.Stdout, "\n") != 1 {
		t.Errorf("completion without a hub: exit %d:\n%s", r.Code, r.Stdout)
	}
}
