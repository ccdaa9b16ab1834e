// Package pg is the storage layer every part of the store shares: the
// connection pool, transactions, the typed errors (ErrNotFound,
// ErrConflict, ErrUnavailable) the API and CLI map to codes, LISTEN, the
// read-back of pipelined batches and the schema migrations.
package pg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Typed errors the API and CLI map to codes and exit statuses. Store methods
// wrap them (errors.Is works) with a message that names what was missing or
// clashing; the cause of an ErrUnavailable stays in the chain for logs.
var (
	ErrNotFound    = errors.New("not found")
	ErrConflict    = errors.New("conflict")
	ErrUnavailable = errors.New("database unavailable")
)

// unavailableError keeps the driver's error for logs while matching
// ErrUnavailable.
type unavailableError struct{ cause error }

func (e *unavailableError) Error() string        { return "database unavailable: " + e.cause.Error() }
func (e *unavailableError) Unwrap() []error      { return []error{ErrUnavailable, e.cause} }
func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }

// conflictError is a unique violation: its text names only the
// constraint (the driver's detail quotes the conflicting values), while
// the driver's error stays reachable with errors.As for the store itself.
type conflictError struct {
	constraint string
	cause      error
}

func (e *conflictError) Error() string   { return ErrConflict.Error() + ": " + e.constraint }
func (e *conflictError) Unwrap() []error { return []error{ErrConflict, e.cause} }

// Classify turns driver errors into the store's typed errors. Errors that are
// already typed, and errors of the caller's own making, pass through.
func Classify(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	if IsUnavailable(err) {
		return &unavailableError{cause: err}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation
		return &conflictError{constraint: pgErr.ConstraintName, cause: err}
	}
	return err
}

// IsUnavailable reports whether err means the database cannot be reached or
// is refusing work right now (as opposed to rejecting this statement), so the
// caller should back off and retry rather than give up on the input.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case len(pgErr.Code) == 5 && pgErr.Code[:2] == "08": // connection exception
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // shutdown, crash, starting up
			return true
		case pgErr.Code == "53300": // too_many_connections
			return true
		case pgErr.Code == "40001", pgErr.Code == "40P01":
			// serialization_failure, deadlock_detected: the statement lost
			// a race and may simply run again. Moving a job between the
			// live and terminal partitions while another statement locks it
			// ends that way ("tuple ... was already moved to another
			// partition").
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	case errors.Is(err, pgconn.ErrConnClosed):
		// The driver closed the connection under the statement (its socket
		// went away, or it died while being set up in AfterConnect): the
		// link to the database is what failed, not the statement.
		return true
	case pgconn.SafeToRetry(err):
		return true
	case errors.Is(err, context.DeadlineExceeded):
		// A pool that cannot hand out a connection before the deadline is
		// the typical shape of an outage.
		return true
	}
	return false
}
