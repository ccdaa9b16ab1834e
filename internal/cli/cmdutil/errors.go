package cmdutil

import (
	"context"
	"errors"
	"fmt"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store"
)

// Exit codes of SPEC §6.2; scripts rely on them.
const (
	ExitOK           = 0
	ExitFailure      = 1
	ExitUsage        = 2
	ExitNotFound     = 3
	ExitUnauthorized = 4
	ExitUnavailable  = 5
)

// ExitError carries an explicit exit code. Silent means the command already
// told the user what went wrong and only the status remains to set.
type ExitError struct {
	Code   int
	Err    error
	Silent bool
	// Hint asks for a pointer to --help: the command line itself was wrong.
	Hint bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// UsageErrorf reports a mistake in how the command was called (exit 2).
func UsageErrorf(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...), Hint: true}
}

// WithCode attaches an exit code to err.
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: code, Err: err}
}

// SilentExit ends the command with code after it printed its own message.
func SilentExit(code int) error { return &ExitError{Code: code, Silent: true} }

// ExitCode maps an error to the exit status of SPEC §6.2. Errors without a
// known type are plain failures.
func ExitCode(err error) int {
	var exitErr *ExitError
	var cfgErr *config.ValidationError
	var invalid *service.ValidationError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &exitErr):
		return exitErr.Code
	case errors.As(err, &cfgErr), errors.As(err, &invalid):
		return ExitUsage
	case errors.Is(err, store.ErrNotFound):
		return ExitNotFound
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return ExitUnavailable
	}
	return ExitFailure
}
