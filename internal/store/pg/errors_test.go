package pg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestIsUnavailable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"unexpected EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		// Seen as "recover expired leases: conn closed" when the database
		// went away under a pooled connection.
		{"a connection the driver closed", fmt.Errorf("recover expired leases: %w", pgconn.ErrConnClosed), true},
		{"a new connection that failed while set up", fmt.Errorf("%w: turn JIT off on a new connection: %w", ErrUnavailable, errors.New("conn closed")), true},
		{"pool deadline", fmt.Errorf("acquire: %w", context.DeadlineExceeded), true},
		{"connection exception", &pgconn.PgError{Code: "08006"}, true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"syntax error", &pgconn.PgError{Code: "42601"}, false},
		{"anything else", errors.New("bad input"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsUnavailable(tt.err); got != tt.want {
				t.Errorf("IsUnavailable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
