// Package clitest runs hubctl in-process for tests, through cli.Run, the
// entry point the binary uses: the whole command tree, the exit-code mapping,
// the "Error: ..." line and the usage hint are the real ones, so a test sees
// exactly what a user would. Only _test.go files may import it.
package clitest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/internal/testutil/syncbuf"
)

// Result is the outcome of one finished invocation.
type Result struct {
	Code   int
	Stdout string
	Stderr string
}

// Run executes `hubctl <args>` with env as the whole environment (nil for an
// empty one) and nothing on standard input.
func Run(t testing.TB, env map[string]string, args ...string) Result {
	t.Helper()
	return RunWithStdin(t, env, "", args...)
}

// RunWithStdin is Run with stdin as standard input.
func RunWithStdin(t testing.TB, env map[string]string, stdin string, args ...string) Result {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	in.WriteString(stdin)
	code := cli.Run(t.Context(), newFactory(ios, env), args)
	return Result{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}

// Database is an environment naming dsn as the configured database and
// nothing else; "" names none.
func Database(dsn string) map[string]string {
	if dsn == "" {
		return nil
	}
	return map[string]string{"STREAMING_HUB_POSTGRES_DSN": dsn}
}

// Process is hubctl running in the background, for long-lived commands such
// as serve and dev that a test drives while they run and then stops.
type Process struct {
	t      testing.TB
	args   []string
	stdout *syncbuf.Buffer
	stderr *syncbuf.Buffer
	cancel context.CancelFunc
	done   chan struct{}
	code   int // written once, before done is closed
}

// Start launches `hubctl <args>` with env as the whole environment. The test's
// cleanup stops it if the test has not.
func Start(t testing.TB, env map[string]string, args ...string) *Process {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	p := &Process{t: t, args: args, stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, done: make(chan struct{})}
	ios.Out, ios.ErrOut = p.stdout, p.stderr
	ctx, cancel := context.WithCancel(t.Context())
	p.cancel = cancel
	f := newFactory(ios, env)
	go func() {
		defer close(p.done)
		p.code = cli.Run(ctx, f, args)
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// Stdout is what the command has written to standard output so far.
func (p *Process) Stdout() string { return p.stdout.String() }

// Stderr is what the command has written to standard error so far.
func (p *Process) Stderr() string { return p.stderr.String() }

// Exited reports the exit code once the command has ended on its own.
func (p *Process) Exited() (code int, exited bool) {
	select {
	case <-p.done:
		return p.code, true
	default:
		return 0, false
	}
}

// ExitReport says how the command ended, with its standard error, or ""
// while it runs: a wait.Poll's Abort, so that a wait on a command that has
// died fails at once.
func (p *Process) ExitReport() string {
	code, exited := p.Exited()
	if !exited {
		return ""
	}
	return fmt.Sprintf("hubctl %s exited %d:\n%s", strings.Join(p.args, " "), code, p.Stderr())
}

// Stop does what SIGTERM (or Ctrl-C) does to the binary, cancelling the
// command's context, and returns the exit code. A command still running after
// timeout fails the test: a clean stop is part of what such commands promise.
func (p *Process) Stop(timeout time.Duration) int {
	p.t.Helper()
	p.cancel()
	select {
	case <-p.done:
		return p.code
	case <-time.After(timeout):
		p.t.Fatalf("hubctl %v did not stop within %s of SIGTERM:\n%s", p.args, timeout, p.Stderr())
		return -1
	}
}

// newFactory builds a factory over ios whose environment is env alone, so the
// machine running the tests cannot leak settings into them.
func newFactory(ios *iostreams.IOStreams, env map[string]string) *cmdutil.Factory {
	return cmdtest.FactoryOver(ios, env)
}
