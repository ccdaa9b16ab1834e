package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/hubctl/hubctl/internal/cli/profile"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/pkg/client"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Exit codes (README.md, Using it); scripts rely on them.
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

// ExitCode maps an error to its exit status (README.md, Using it), the same way for
// both modes: an answer of the API (*client.Error) and the hubapi error
// the same use case returns in process get the same code.
//
// The rule for bad input: 2 is for a command line cobra or the command
// itself rejects before asking the hub (an unknown flag, a missing
// argument, --limit 0, no --tenant where one is needed) and for bad
// configuration; 1 is for values the hub's validation rejects (an invalid
// tenant id, an invalid sink, a forged cursor), since the API answers those
// with a 400 the CLI cannot tell apart from any other rejection. Errors
// without a known type are plain failures.
func ExitCode(err error) int {
	var (
		exitErr   *ExitError
		apiErr    *client.Error
		forbidden *hubapi.ForbiddenError
		cfgErr    *config.ValidationError
		setupErr  *config.SetupError
		transErr  *url.Error
		noCtxErr  *profile.UnknownContextError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &exitErr):
		return exitErr.Code
	case errors.As(err, &apiErr):
		return exitCodeForStatus(apiErr.StatusCode)
	case errors.As(err, &forbidden):
		return ExitUnauthorized
	case errors.As(err, &cfgErr), errors.As(err, &setupErr):
		return ExitUsage
	case errors.Is(err, pg.ErrNotFound), errors.As(err, &noCtxErr):
		return ExitNotFound
	case errors.Is(err, pg.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return ExitUnavailable
	case errors.Is(err, context.Canceled):
		return ExitFailure
	case errors.As(err, &transErr):
		// The hub could not be reached, or stopped answering mid-way.
		return ExitUnavailable
	}
	return ExitFailure
}

// exitCodeForStatus maps an API answer to the exit code the same outcome
// has in direct mode: 404 like hubapi.NotFoundError, 503 like
// pg.ErrUnavailable; 400, 409, 422 and 500 are failures.
func exitCodeForStatus(status int) int {
	switch status {
	case http.StatusNotFound:
		return ExitNotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		return ExitUnauthorized
	case http.StatusServiceUnavailable, http.StatusTooManyRequests, http.StatusBadGateway, http.StatusGatewayTimeout:
		return ExitUnavailable
	}
	return ExitFailure
}
