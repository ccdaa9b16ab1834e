// Package clip bounds text that came from outside the hub (a destination's
// answer, a probe's error) before it is stored or shown.
package clip

import "unicode/utf8"

// Ellipsis marks text that was cut.
const Ellipsis = "…"

// String cuts s to at most limit bytes without splitting a character,
// ending what it cut with Ellipsis. s is returned as it is when it fits.
func String(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := max(limit-len(Ellipsis), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + Ellipsis
}
