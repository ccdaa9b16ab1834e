// Package cmdtest runs one verb on its own, built with a runF seam: its flag
// parsing and validation exactly as the command does them, without the
// root, a hub or a database. It imports no command, so a command's own
// internal tests can use it too. Only _test.go files may import it.
package cmdtest

import (
	"bytes"
	"testing"

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
