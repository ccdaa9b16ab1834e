// Package logging builds hubctl's slog logger. Payloads and secrets never go
// through it: callers log identifiers (tenant, event id, subscription id),
// never bodies or credentials.
package logging

import (
	"io"
	"log/slog"
)

// New returns a logger writing to w at level: human-readable text when human
// is true (local development), JSON lines otherwise (log shippers).
func New(w io.Writer, level slog.Level, human bool) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if human {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
