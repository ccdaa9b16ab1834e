package root_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
)

// run executes hubctl with env as its whole environment.
func run(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios, LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}}
	code = cli.Run(context.Background(), f, args)
	return code, out.String(), errOut.String()
}

func TestConfigShowBadSettingExitsTwoWithOneLine(t *testing.T) {
	code, stdout, stderr := run(t, map[string]string{"STREAMING_HUB_DISPATCH_WORKERS": "abc"}, "config", "show")
	if code != cmdutil.ExitUsage {
		t.Errorf("exit code = %d, want %d", code, cmdutil.ExitUsage)
	}
	if stdout != "" {
		t.Errorf("nothing may reach stdout, got %q", stdout)
	}
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "STREAMING_HUB_DISPATCH_WORKERS") {
		t.Errorf("want one line naming the setting, got %q", stderr)
	}
}

func TestConfigShowMasksSecretsAndReportsSources(t *testing.T) {
	env := map[string]string{
		"STREAMING_HUB_ADMIN_TOKEN":  "an-admin-token-that-is-long",
		"STREAMING_HUB_POSTGRES_DSN": "postgres://hub:s3cret-pw@db:5432/hub",
	}
	code, stdout, stderr := run(t, env, "config", "show", "-o", "json", "--log-level", "debug")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, secret := range []string{"an-admin-token-that-is-long", "s3cret-pw"} {
		if strings.Contains(stdout, secret) {
			t.Errorf("secret %q leaked into config show", secret)
		}
	}
	for _, want := range []string{`"postgres://hub:****@db:5432/hub"`, `"setting": "STREAMING_HUB_LOG_LEVEL",
    "value": "debug",
    "source": "flag"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"no-such-command"},
		{"config", "show", "--no-such-flag"},
		{"version", "extra-arg"},
		{"config", "show", "-o", "xml"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if code, _, stderr := run(t, nil, args...); code != cmdutil.ExitUsage {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := run(t, nil, "version")
	if code != 0 || !strings.HasPrefix(stdout, "hubctl ") {
		t.Errorf("version: exit %d, %q", code, stdout)
	}
}
