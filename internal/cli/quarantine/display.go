package quarantine

import (
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
