package login_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/profile"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/testpki"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestLoginThenCommandsNeedNoExport runs the profile flow: login with a
// token on stdin, then commands in an environment that names no hub at
// all reach it through the stored context; context use switches, and an
// explicit database still wins.
func TestLoginThenCommandsNeedNoExport(t *testing.T) {
	dsn := pgtest.DSN(t)
	if r := clitest.Run(t, clitest.Direct(dsn), "tenants", "create", "acme"); r.Code != 0 {
		t.Fatalf("create tenant: %s", r.Stderr)
	}
	r := clitest.Run(t, clitest.Direct(dsn), "tenants", "keys", "create", "acme", "--name", "test", "-o", "json")
	var key struct{ Key string }
	if err := json.Unmarshal([]byte(r.Stdout), &key); r.Code != 0 || err != nil {
		t.Fatalf("create key: %s", r.Stderr)
	}
	url := clitest.Serve(t, dsn)
	dir := t.TempDir()
	fresh := map[string]string{profile.EnvConfigDir: dir}

	// Before login: no hub, and the message says how to name one.
	if r := clitest.Run(t, fresh, "subs", "list"); r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "no hub configured") {
		t.Fatalf("before login: exit %d, %q; want 2 and no hub configured", r.Code, r.Stderr)
	}

	if r := clitest.RunWithStdin(t, fresh, key.Key+"\n", "login", "--server", url, "--name", "local"); r.Code != 0 {
		t.Fatalf("login: exit %d: %s", r.Code, r.Stderr)
	}
	info, err := os.Stat(filepath.Join(dir, "config.yaml"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("profile file: %v, %v; want mode 0600", info, err)
	}

	if r := clitest.Run(t, fresh, "subs", "create", "--name", "feed", "--type", "pull", "-o", "json"); r.Code != 0 {
		t.Fatalf("subs create through the context: exit %d: %s", r.Code, r.Stderr)
	}
	r = clitest.Run(t, fresh, "subs", "list", "--jq", ".items[].name")
	if r.Code != 0 || r.Stdout != "feed\n" {
		t.Fatalf("subs list through the context: exit %d, %q (%s)", r.Code, r.Stdout, r.Stderr)
	}

	list := clitest.Run(t, fresh, "context", "list", "-o", "json")
	if list.Code != 0 || !strings.Contains(list.Stdout, `"name": "local"`) || !strings.Contains(list.Stdout, `"current": true`) ||
		strings.Contains(list.Stdout, key.Key) {
		t.Fatalf("context list: exit %d, %s; want local, current, and no token", list.Code, list.Stdout)
	}
	if r := clitest.Run(t, fresh, "context", "use", "nowhere"); r.Code != cmdutil.ExitNotFound {
		t.Errorf("context use of an unknown name: exit %d, want 3", r.Code)
	}

	if r := clitest.Run(t, clitest.With(fresh, map[string]string{profile.EnvContext: "nowhere"}), "subs", "list"); r.Code != cmdutil.ExitNotFound || !strings.Contains(r.Stderr, `"nowhere"`) {
		t.Errorf("%s naming an unknown context: exit %d, %q; want 3", profile.EnvContext, r.Code, r.Stderr)
	}

	// Login checks the hub before storing anything.
	before, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, refused := range []struct {
		server, token string
		want          int
	}{
		{"http://127.0.0.1:1", key.Key, cmdutil.ExitUnavailable},
		{url, "hub_not-a-key-of-this-hub", cmdutil.ExitUnauthorized},
	} {
		r := clitest.RunWithStdin(t, fresh, refused.token+"\n", "login", "--server", refused.server, "--name", "refused")
		if r.Code != refused.want || !strings.Contains(r.Stderr, "nothing stored") || strings.Contains(r.Stderr, refused.token) {
			t.Errorf("login to %s: exit %d, %q; want %d, saying nothing was stored, without the token", refused.server, r.Code, r.Stderr, refused.want)
		}
	}
	if after, err := os.ReadFile(filepath.Join(dir, "config.yaml")); err != nil || string(after) != string(before) {
		t.Errorf("a refused login changed the profiles (%v):\n%s", err, after)
	}
	// The admin token is accepted without a tenant: it acts on tenants.
	if r := clitest.RunWithStdin(t, fresh, clitest.AdminToken+"\n", "login", "--server", url, "--name", "admin"); r.Code != 0 {
		t.Errorf("login with the admin token: exit %d: %s", r.Code, r.Stderr)
	}

	// A second context that points nowhere, stored unchecked and made
	// current: commands follow it, and their errors name it.
	if r := clitest.RunWithStdin(t, fresh, "other-token\n", "login", "--server", "http://127.0.0.1:1", "--name", "dead", "--no-verify"); r.Code != 0 {
		t.Fatalf("second login: %s", r.Stderr)
	}
	if r := clitest.Run(t, fresh, "subs", "list"); r.Code != cmdutil.ExitUnavailable || !strings.Contains(r.Stderr, "(context dead)") {
		t.Errorf("subs list on the dead context: exit %d, %q; want 5 naming the context", r.Code, r.Stderr)
	}
	if r := clitest.Run(t, fresh, "context", "delete", "dead"); r.Code != 0 || !strings.Contains(r.Stderr, "no context is current") {
		t.Errorf("context delete of the current one: exit %d, %q", r.Code, r.Stderr)
	}
	if r := clitest.Run(t, fresh, "context", "delete", "dead"); r.Code != cmdutil.ExitNotFound {
		t.Errorf("context delete of a deleted one: exit %d, want 3", r.Code)
	}
	if r := clitest.Run(t, fresh, "subs", "list"); r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "no hub configured") {
		t.Errorf("with no current context: exit %d, %q; want 2 and no hub configured", r.Code, r.Stderr)
	}
	if r := clitest.Run(t, fresh, "context", "use", "local"); r.Code != 0 {
		t.Fatalf("context use local: %s", r.Stderr)
	}
	if r := clitest.Run(t, fresh, "subs", "list", "--jq", ".items | length"); r.Code != 0 || r.Stdout != "1\n" {
		t.Errorf("after context use local: exit %d, %q", r.Code, r.Stdout)
	}
	// An explicit database beats the context.
	direct := clitest.With(fresh, map[string]string{"STREAMING_HUB_POSTGRES_DSN": dsn})
	if r := clitest.Run(t, direct, "subs", "list"); r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "--tenant") {
		t.Errorf("with a database: exit %d, %q; want direct mode asking for --tenant", r.Code, r.Stderr)
	}

	if r := clitest.Run(t, fresh, "login", "--server", url); r.Code != cmdutil.ExitUsage {
		t.Errorf("login without a token: exit %d, want 2", r.Code)
	}
	if r := clitest.RunWithStdin(t, fresh, "t\n", "login", "--server", "ftp://x"); r.Code != cmdutil.ExitUsage {
		t.Errorf("login with a bad server: exit %d, want 2", r.Code)
	}
}

// TestLoginTrustsACAFile: a hub whose certificate a private CA signed is
// refused until login names the CA; the context keeps it, so later
// commands reach the hub too.
func TestLoginTrustsACAFile(t *testing.T) {
	dsn := pgtest.DSN(t)
	ca := testpki.MustCA(t, "login test CA")
	url := clitest.ServeTLS(t, dsn, ca.Server(t, []net.IP{net.IPv4(127, 0, 0, 1)}).TLS)
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	testpki.WriteFile(t, caFile, ca.CertPEM)
	fresh := map[string]string{profile.EnvConfigDir: dir}

	if r := clitest.RunWithStdin(t, fresh, clitest.AdminToken+"\n", "login", "--server", url, "--name", "tls", "--tenant", "acme"); r.Code == 0 ||
		!strings.Contains(r.Stderr, "certificate") {
		t.Fatalf("login without the CA: exit %d, %q; want a refusal naming the certificate", r.Code, r.Stderr)
	}
	if r := clitest.Run(t, clitest.Direct(dsn), "tenants", "create", "acme"); r.Code != 0 {
		t.Fatalf("create tenant: %s", r.Stderr)
	}
	if r := clitest.RunWithStdin(t, fresh, clitest.AdminToken+"\n", "login", "--server", url, "--name", "tls", "--tenant", "acme", "--ca-file", caFile); r.Code != 0 {
		t.Fatalf("login with --ca-file: exit %d: %s", r.Code, r.Stderr)
	}
	if r := clitest.Run(t, fresh, "subs", "list", "-o", "json"); r.Code != 0 {
		t.Fatalf("subs list through the context: exit %d: %s", r.Code, r.Stderr)
	}
	if r := clitest.RunWithStdin(t, fresh, clitest.AdminToken+"\n", "login", "--server", url, "--name", "bad", "--ca-file", filepath.Join(dir, "config.yaml")); r.Code != cmdutil.ExitUsage {
		t.Fatalf("--ca-file without a certificate: exit %d, %q; want 2", r.Code, r.Stderr)
	}
}
