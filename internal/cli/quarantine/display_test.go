package quarantine

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestDisplayTextEscapesWhatCouldDriveATerminal(t *testing.T) {
	cases := []struct {
		name, in string
		width    int
		want     string
	}{
		{"plain", "ce-id", 0, "ce-id"},
		{"unicode text", "ação ✓ 日本", 0, "ação ✓ 日本"},
		{"ANSI colour", "\x1b[31mred", 0, `\x1b[31mred`},
		{"newline and tab", "a\nb\tc", 0, `a\x0ab\x09c`},
		{"C1 control", "a\u009bb", 0, `a\x9bb`},
		{"bidi override", "abc\u202edcba", 0, `abc\u202edcba`},
		{"line separator", "a\u2028b", 0, `a\u2028b`},
		{"invalid UTF-8", "a\xffb", 0, `a\xffb`},
		{"real replacement character", "a\ufffdb", 0, "a\ufffdb"},
		{"cut to width", "abcdefgh", 5, "abcde…"},
		{"exactly width", "abcde", 5, "abcde"},
		{"width counts runes", "ççççç", 3, "ççç…"},
	}
	for _, c := range cases {
		if got := displayText(c.in, c.width); got != c.want {
			t.Errorf("%s: displayText(%q, %d) = %q, want %q", c.name, c.in, c.width, got, c.want)
		}
	}
}

func TestCompactHeaders(t *testing.T) {
	headers := []hubapi.QuarantineHeader{
		{Key: "ce-id", Value: "not-a-uuid"},
		{Key: "ce-tenantid", Value: "/w==", Encoding: hubapi.EncodingBase64},
		{Key: "gA==", KeyEncoding: hubapi.EncodingBase64, Value: "v"},
		{Key: "ce-type", Value: "studio.lerian.midaz.transaction.posted"},
	}
	cases := []struct {
		name    string
		headers []hubapi.QuarantineHeader
		width   int
		want    string
	}{
		{"none", nil, 80, "-"},
		{"all fit", headers[:3], 200, "ce-id=not-a-uuid ce-tenantid=base64:/w== base64:gA===v"},
		{"long values cut", headers[3:], 200, "ce-type=studio.lerian.midaz.…"},
		{"too many for the width", headers, 30, "ce-id=not-a-uuid …(+3)"},
		{"first header always shown", headers[3:], 5, "ce-type=studio.lerian.midaz.…"},
	}
	for _, c := range cases {
		if got := compactHeaders(c.headers, c.width); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestDisplayKey(t *testing.T) {
	key, binary := "acme", "/wA="
	cases := []struct {
		item hubapi.QuarantineItem
		want string
	}{
		{hubapi.QuarantineItem{}, "-"},
		{hubapi.QuarantineItem{Key: &key}, "acme"},
		{hubapi.QuarantineItem{Key: &binary, Encoding: hubapi.EncodingBase64}, "base64:/wA="},
		{hubapi.QuarantineItem{Key: ptr(strings.Repeat("k", 30))}, strings.Repeat("k", keyWidth) + "…"},
	}
	for _, c := range cases {
		if got := displayKey(c.item); got != c.want {
			t.Errorf("displayKey(%+v) = %q, want %q", c.item, got, c.want)
		}
	}
}

func ptr(s string) *string { return &s }
