package when

import (
	"errors"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		value   string
		want    time.Time
		wantErr error
	}{
		{"1h", now.Add(-time.Hour), nil},
		{"90m", now.Add(-90 * time.Minute), nil},
		{"2026-12-01T00:00:00Z", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), nil},
		{"2026-12-01T01:00:00.5+01:00", time.Date(2026, 12, 1, 0, 0, 0, 500_000_000, time.UTC), nil},
		{"0s", time.Time{}, ErrNotPositive},
		{"-1h", time.Time{}, ErrNotPositive},
		{"yesterday", time.Time{}, ErrFormat},
		{"2026-12-01", time.Time{}, ErrFormat},
		{"", time.Time{}, ErrFormat},
	} {
		got, err := Parse(tc.value, now)
		if !errors.Is(err, tc.wantErr) || !got.Equal(tc.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v, %v", tc.value, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestFormatIsUTC(t *testing.T) {
	at := time.Date(2026, 12, 1, 1, 0, 0, 0, time.FixedZone("CET", 3600))
	if got := Format(at); got != "2026-12-01T00:00:00Z" {
		t.Errorf("Format = %q", got)
	}
}
