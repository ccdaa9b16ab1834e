package root_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/root"
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

// TestMistypedVerbsExitTwoAtEveryLevel walks the whole command tree: a
// mistyped verb under any group must fail like one under the root, never
// print help and exit 0, which a script would take for success.
func TestMistypedVerbsExitTwoAtEveryLevel(t *testing.T) {
	var groups [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.HasSubCommands() {
			groups = append(groups, path)
		}
		for _, sub := range c.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(root.NewCmd(cmdutil.New()), nil)
	if len(groups) < 5 {
		t.Fatalf("found only %d command groups: %v", len(groups), groups)
	}
	for _, path := range groups {
		args := append(slices.Clone(path), "no-such-verb")
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := clitest.Run(t, nil, args...)
			if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, `unknown command "no-such-verb"`) {
				t.Errorf("exit %d, stderr %q; want 2 and unknown command", r.Code, r.Stderr)
			}
		})
	}
	r := clitest.Run(t, nil, "subs", "lst")
	if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "Did you mean this?") || !strings.Contains(r.Stderr, "list") {
		t.Errorf("subs lst: exit %d, stderr %q; want 2 and a suggestion of list", r.Code, r.Stderr)
	}
	if r := clitest.Run(t, nil, "subs"); r.Code != 0 || !strings.Contains(r.Stdout, "Available Commands") {
		t.Errorf("subs alone: exit %d, want its help and 0", r.Code)
	}
}

func TestJQPicksFromTheJSON(t *testing.T) {
	r := clitest.Run(t, nil, "version", "--jq", ".platform")
	if r.Code != 0 || !strings.Contains(r.Stdout, "/") || strings.Contains(r.Stdout, `"`) || strings.Contains(r.Stdout, "{") {
		t.Errorf("version --jq .platform: exit %d, %q; want the bare platform", r.Code, r.Stdout)
	}
	if r := clitest.Run(t, nil, "version", "--jq", ".["); r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "--jq") {
		t.Errorf("a malformed --jq: exit %d, stderr %q; want 2 naming --jq", r.Code, r.Stderr)
	}
	if r := clitest.Run(t, nil, "version", "--jq", ".version", "-o", "yaml"); r.Code != cmdutil.ExitUsage {
		t.Errorf("--jq with -o yaml: exit %d, want 2", r.Code)
	}
}

func TestMistypedEnvironmentVariableIsWarnedAbout(t *testing.T) {
	r := clitest.Run(t, map[string]string{"STREAMING_HUB_DISPATCH_WORKER": "8"}, "config", "show", "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Stderr, "warning: STREAMING_HUB_DISPATCH_WORKER is set but is not a hubctl setting; did you mean STREAMING_HUB_DISPATCH_WORKERS?") {
		t.Errorf("exit %d, stderr %q; want a warning with the likely setting", r.Code, r.Stderr)
	}
	if strings.Count(r.Stderr, "warning:") != 1 {
		t.Errorf("warned %d times, want once: %q", strings.Count(r.Stderr, "warning:"), r.Stderr)
	}
}

// The --jq help's example must fit the command's JSON: a page's items only
// where the command lists a page (it takes --cursor), never on one object.
func TestJQExampleFitsTheCommand(t *testing.T) {
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		jq := c.Flags().Lookup("jq")
		if jq == nil {
			return
		}
		checked++
		pages := c.Flags().Lookup("cursor") != nil
		if lists := strings.Contains(jq.Usage, ".items[]"); lists != pages {
			t.Errorf("%s --jq help %q: a page's example %v, but lists a page %v", c.CommandPath(), jq.Usage, lists, pages)
		}
	}
	walk(root.NewCmd(cmdutil.New()))
	if checked < 20 {
		t.Errorf("only %d commands with --jq found", checked)
	}
}

// A shell expands an unquoted glob such as transaction.* against the
// current folder, so no example a reader may paste leaves one bare.
func TestExamplesQuoteGlobs(t *testing.T) {
	bare := regexp.MustCompile(`(?:^|\s)[^'"\s]*\*[^'"\s]*(?:\s|$)`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		for _, line := range strings.Split(c.Example, "\n") {
			if bare.MatchString(line) {
				t.Errorf("%s example leaves a glob unquoted: %q", c.CommandPath(), line)
			}
		}
	}
	walk(root.NewCmd(cmdutil.New()))
}
