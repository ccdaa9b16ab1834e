package quarantine

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Everything shown here comes from records that were rejected for being
// malformed, possibly crafted: before it reaches a terminal, every rune that
// could move the cursor, recolour the screen, reorder text (bidi controls)
// or break the table's rows is escaped.

// displayText makes s safe for a table cell and, when width > 0, cuts it to
// width runes with an ellipsis.
func displayText(s string, width int) string {
	var b strings.Builder
	runes := 0
	for i, r := range s {
		if width > 0 && runes == width {
			b.WriteString("…")
			break
		}
		switch {
		case r == utf8.RuneError && isInvalidAt(s, i):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsGraphic(r): // letters, marks, numbers, punctuation, symbols, spaces
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		runes++
	}
	return b.String()
}

// isInvalidAt tells a real U+FFFD in s from the replacement range-over-string
// yields for a byte that is not UTF-8.
func isInvalidAt(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size == 1
}

// displayKey shows the record key, "-" when the record had none.
func displayKey(item hubapi.QuarantineItem) string {
	if item.Key == nil {
		return "-"
	}
	return encoded(*item.Key, item.Encoding, keyWidth)
}

// encoded shows a value as text, or marks it as base64 so that a reader
// never takes base64 for what the producer sent.
func encoded(value, encoding string, width int) string {
	if encoding == hubapi.EncodingBase64 {
		return "base64:" + displayText(value, width)
	}
	return displayText(value, width)
}

// Each header value in the compact form is cut to this many runes: enough to
// recognise an id or a type, short enough to see every header name.
const headerValueWidth = 20

// compactHeaders renders headers as "name=value" pairs on one line, cut to
// width runes with a count of those left out, so the table shows which
// headers the record carried and what they roughly held.
func compactHeaders(headers []hubapi.QuarantineHeader, width int) string {
	if len(headers) == 0 {
		return "-"
	}
	var b strings.Builder
	used := 0
	for i, h := range headers {
		pair := encoded(h.Key, h.KeyEncoding, headerValueWidth) + "=" + encoded(h.Value, h.Encoding, headerValueWidth)
		sep := ""
		if i > 0 {
			sep = " "
		}
		n := utf8.RuneCountInString(sep + pair)
		if i > 0 && used+n > width {
			fmt.Fprintf(&b, " …(+%d)", len(headers)-i)
			break
		}
		b.WriteString(sep + pair)
		used += n
	}
	return b.String()
}
