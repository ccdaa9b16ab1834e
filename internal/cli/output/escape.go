package output

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text a table shows may come from anyone: a tenant's subscription name, a
// destination's error, a header of a crafted record. Before it reaches a
// terminal every rune that could move the cursor, reorder what follows
// (bidi controls such as U+202E), hide itself (zero-width and other format
// characters) or break the table's rows is escaped: \xNN for bytes that are
// not UTF-8 and runes up to U+00FF, \uNNNN above. -o json and -o yaml
// carry the text as it is.

// SafeText makes s safe for a terminal and, when width > 0, cuts it to
// width runes with an ellipsis.
func SafeText(s string, width int) string {
	if width <= 0 && isPlain(s) {
		return s
	}
	var b strings.Builder
	runes := 0
	for i := 0; i < len(s); {
		if width > 0 && runes == width {
			b.WriteString("…")
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		writeSafeRune(&b, r, size, s[i])
		i += size
		runes++
	}
	return b.String()
}

func writeSafeRune(b *strings.Builder, r rune, size int, first byte) {
	switch {
	case r == utf8.RuneError && size == 1:
		fmt.Fprintf(b, `\x%02x`, first)
	case unicode.IsGraphic(r): // letters, marks, numbers, punctuation, symbols, spaces
		b.WriteRune(r)
	case r <= 0xff:
		fmt.Fprintf(b, `\x%02x`, r)
	default:
		fmt.Fprintf(b, `\u%04x`, r)
	}
}

// isPlain reports whether s needs no escaping: printable ASCII, the common
// case, passes without a copy.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// safeCell is SafeText for a whole table cell, which may carry the colour
// Style gave a state word: SGR sequences (ESC [ digits and semicolons m)
// pass, anything else is escaped. A cell that leaves a colour on is reset
// at its end, so no colour bleeds into the next cell.
func safeCell(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	coloured := false
	for i := 0; i < len(s); {
		if n := sgrLength(s[i:]); n > 0 {
			seq := s[i : i+n]
			b.WriteString(seq)
			coloured = seq != "\x1b[0m" && seq != "\x1b[m"
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		writeSafeRune(&b, r, size, s[i])
		i += size
	}
	if coloured {
		b.WriteString("\x1b[0m")
	}
	return b.String()
}

// sgrLength is the length of the SGR sequence s starts with, 0 if none.
func sgrLength(s string) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s) && i < 32; i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case c == ';' || '0' <= c && c <= '9':
		default:
			return 0
		}
	}
	return 0
}
