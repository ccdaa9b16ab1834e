package portal

import "testing"

func TestSinceValue(t *testing.T) {
	for text, want := range map[string]string{
		"2026-03-01T12:00":           "2026-03-01T12:00:00Z",
		"2026-03-01T12:00:30":        "2026-03-01T12:00:30Z",
		" 2026-03-01T12:00:00+01:00": "2026-03-01T12:00:00+01:00",
	} {
		if got, err := sinceValue(text); err != nil || got != want {
			t.Errorf("%q: %q (%v), want %q", text, got, err, want)
		}
	}
	for _, text := range []string{"", "yesterday", "2026-03-01", "12:00"} {
		if _, err := sinceValue(text); err == nil {
			t.Errorf("%q: accepted", text)
		}
	}
}
