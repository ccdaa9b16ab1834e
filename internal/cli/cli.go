// Package cli is hubctl's command line: Main builds the command tree, runs it
// and turns the outcome into the exit codes scripts rely on (README.md, Using it).
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/root"
)

// Main runs hubctl with the process's arguments and returns its exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, cmdutil.New(), os.Args[1:])
}

// Run executes one invocation; tests call it with their own factory.
func Run(ctx context.Context, f *cmdutil.Factory, args []string) int {
	cmd := root.NewCmd(f)
	cmd.SetArgs(args)
	executed, err := cmd.ExecuteContextC(ctx)
	if err == nil {
		return cmdutil.ExitOK
	}
	code := cmdutil.ExitCode(err)
	var exitErr *cmdutil.ExitError
	hint := errors.As(err, &exitErr) && exitErr.Hint
	if isUnknownCommand(err) {
		code, hint = cmdutil.ExitUsage, true
	}
	if exitErr == nil || !exitErr.Silent {
		fmt.Fprintln(f.IOStreams.ErrOut, "Error: "+err.Error())
		if hint && executed != nil {
			fmt.Fprintf(f.IOStreams.ErrOut, "Run '%s --help' for usage.\n", executed.CommandPath())
		}
	}
	return code
}

// cobra reports an unknown subcommand with a plain error before any command
// runs; it is a usage error all the same.
func isUnknownCommand(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command ") || strings.HasPrefix(err.Error(), "unknown flag")
}
