// Package when reads a time as people type one into the CLI's flags and the
// portal's forms: an RFC 3339 time, or a duration back from now ("6h").
// Both surfaces read it alike and send the hub the RFC 3339 time it means.
package when

import (
	"errors"
	"time"
)

// ErrNotPositive is a duration that does not count back from now.
var ErrNotPositive = errors.New("a duration counts back from now and must be positive")

// ErrFormat is a value that is neither an RFC 3339 time nor a duration.
var ErrFormat = errors.New("use an RFC 3339 time (2026-12-01T00:00:00Z) or a duration back from now (6h)")

// Parse reads value as an RFC 3339 time, or as a positive duration before
// now.
func Parse(value string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(value); err == nil {
		if d <= 0 {
			return time.Time{}, ErrNotPositive
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, value)
	if err != nil {
		return time.Time{}, ErrFormat
	}
	return t, nil
}

// Format is the RFC 3339 text the hub takes for t.
func Format(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}
