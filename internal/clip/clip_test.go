package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for _, tc := range []struct {
		s     string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven " + Ellipsis},   // 7 bytes kept + 3 of the ellipsis
		{"ab" + "é" + "cdefgh", 6, "ab" + Ellipsis}, // é would be split at byte 3
		{strings.Repeat("€", 4), 7, "€" + Ellipsis}, // 3-byte runes
		{"abc", 0, Ellipsis},
		{"a bit too long", 10, "a bit t…"},
		{"ééééé", 6, "é…"}, // never half a character
		{strings.Repeat("é", 150), 11, "éééé…"},
		{"ab✓cd", 5, "ab…"},
	} {
		got := String(tc.s, tc.limit)
		if got != tc.want {
			t.Errorf("String(%q, %d) = %q, want %q", tc.s, tc.limit, got, tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("String(%q, %d) split a character: %q", tc.s, tc.limit, got)
		}
		if len(got) > max(tc.limit, len(Ellipsis)) {
			t.Errorf("String(%q, %d) = %d bytes", tc.s, tc.limit, len(got))
		}
	}
}
