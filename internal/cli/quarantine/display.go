package quarantine

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Everything shown here comes from records that were rejected for being
// malformed, possibly crafted: it reaches the terminal through
// output.SafeText, which escapes every rune that could move the cursor,
// recolour the screen, reorder text (bidi controls) or break the table.

// displayKey shows the record key, "-" when the record had none.
func displayKey(key *string, encoding string, width int) string {
	if key == nil {
		return "-"
	}
	return encoded(*key, encoding, width)
}

// encoded shows a value as text, or marks it as base64 so that a reader
// never takes base64 for what the producer sent.
func encoded(value, encoding string, width int) string {
	if encoding == hubapi.EncodingBase64 {
		return "base64:" + output.SafeText(value, width)
	}
	return output.SafeText(value, width)
}

// Each header value in the compact form is cut to this many runes: enough to
// recognise an id or a type, short enough to see every header name.
const headerValueWidth = 20

// compactHeaders renders headers as "name=value" pairs on one line, cut to
// width runes with a count of those left out (of total), so the table shows
// which headers the record carried and what they roughly held.
func compactHeaders(headers []hubapi.QuarantineHeader, total, width int) string {
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
			fmt.Fprintf(&b, " …(+%d)", total-i)
			return b.String()
		}
		b.WriteString(sep + pair)
		used += n
	}
	if total > len(headers) {
		fmt.Fprintf(&b, " …(+%d)", total-len(headers))
	}
	return b.String()
}
