package root_test

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
)

func TestConfigShowBadSettingExitsTwoWithOneLine(t *testing.T) {
	r := clitest.Run(t, map[string]string{"STREAMING_HUB_DISPATCH_WORKERS": "abc"}, "config", "show")
	if r.Code != cmdutil.ExitUsage {
		t.Errorf("exit code = %d, want %d", r.Code, cmdutil.ExitUsage)
	}
	if r.Stdout != "" {
		t.Errorf("nothing may reach stdout, got %q", r.Stdout)
	}
	lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "STREAMING_HUB_DISPATCH_WORKERS") {
		t.Errorf("want one line naming the setting, got %q", r.Stderr)
	}
}

func TestConfigShowMasksSecretsAndReportsSources(t *testing.T) {
	env := map[string]string{
		"STREAMING_HUB_ADMIN_TOKEN":  "an-admin-token-that-is-long",
		"STREAMING_HUB_POSTGRES_DSN": "postgres://hub:s3cret-pw@db:5432/hub",
	}
	r := clitest.Run(t, env, "config", "show", "-o", "json", "--log-level", "debug")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, secret := range []string{"an-admin-token-that-is-long", "s3cret-pw"} {
		if strings.Contains(r.Stdout, secret) {
			t.Errorf("secret %q leaked into config show", secret)
		}
	}
	for _, want := range []string{`"postgres://hub:****@db:5432/hub"`, `"setting": "STREAMING_HUB_LOG_LEVEL",
    "value": "debug",
    "source": "flag"`} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.Stdout)
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
			if r := clitest.Run(t, nil, args...); r.Code != cmdutil.ExitUsage {
				t.Errorf("exit %d, want 2 (stderr %q)", r.Code, r.Stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	r := clitest.Run(t, nil, "version")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "hubctl ") {
		t.Errorf("version: exit %d, %q", r.Code, r.Stdout)
	}
}
