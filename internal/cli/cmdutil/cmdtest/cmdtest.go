// Package cmdtest runs one verb on its own, built with a runF seam: its flag
// parsing and validation exactly as the command does them, without the
// root, a hub or a database. It imports no command, so a command's own
// internal tests can use it too. Only _test.go files may import it.
package cmdtest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
)

// Factory is a factory over buffer streams with env as the whole
// environment.
func Factory(env map[string]string) (f *cmdutil.Factory, stdin, stdout, stderr *bytes.Buffer) {
	ios, in, out, errOut := iostreams.Test()
	return FactoryOver(ios, env), in, out, errOut
}

// FactoryOver is a factory over ios with env as the whole environment.
func FactoryOver(ios *iostreams.IOStreams, env map[string]string) *cmdutil.Factory {
	return &cmdutil.Factory{IOStreams: ios, LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}, Environ: func() []string {
		kv := make([]string, 0, len(env))
		for k, v := range env {
			kv = append(kv, k+"="+v)
		}
		return kv
	}}
}

// Exec runs cmd with args and returns cobra's error. The factory sees the
// command's flags, as the root's pre-run arranges in a real invocation.
func Exec(t testing.TB, f *cmdutil.Factory, cmd *cobra.Command, args ...string) error {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(&bytes.Buffer{})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.PersistentPreRun = func(cmd *cobra.Command, _ []string) { f.UseFlags(cmd.Flags(), "") }
	return cmd.ExecuteContext(t.Context())
}

// Terminal is a factory whose stdout is a terminal width cells wide, for
// what a person sees in a table.
func Terminal(width int) (*cmdutil.Factory, *bytes.Buffer) {
	ios, _, out, _ := iostreams.Test()
	ios.SetStdoutTTY(true)
	ios.SetTerminalWidth(width)
	return FactoryOver(ios, nil), out
}

// RequireFits fails t for every line of out wider than width cells, and
// for a table whose rows do not start each column where its header does.
func RequireFits(t testing.TB, out string, width int) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > width {
			t.Errorf("a line of %d cells at %d:\n%s", w, width, l)
		}
	}
	if len(lines) == 0 {
		t.Fatal("nothing printed")
	}
	// Every header word starts a column: each row has a space before it
	// and text at it.
	header := []rune(lines[0])
	for i, r := range header {
		if r == ' ' || i > 0 && header[i-1] != ' ' || i > 0 && i < 2 {
			continue
		}
		if i > 1 && header[i-2] != ' ' {
			continue // a word of a header of two words (EVENT TYPES)
		}
		for _, l := range lines[1:] {
			row := []rune(l)
			if i < len(row) && (row[i] == ' ' || i > 0 && row[i-1] != ' ') {
				t.Errorf("column at %d of %q misaligned in:\n%s", i, lines[0], l)
			}
		}
	}
}
