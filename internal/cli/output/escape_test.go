package output

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/iostreams"
)

func TestSafeText(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  string
	}{
		{"plain name", 0, "plain name"},
		{"é ü 日本 🙂", 0, "é ü 日本 🙂"},
		{"invoice\u202egpj.exe", 0, `invoice\u202egpj.exe`},
		{"a\u2066b\u2069c\u200bd\ufeff", 0, `a\u2066b\u2069c\u200bd\ufeff`},
		{"line\nbreak\ttab\r", 0, `line\x0abreak\x09tab\x0d`},
		{"\x1b[2Jclear", 0, `\x1b[2Jclear`},
		{"c1\u0085", 0, `c1\x85`},
		{"bad\xffbyte", 0, `bad\xffbyte`},
		{"real \ufffd stays", 0, "real \ufffd stays"},
		{"abcdef", 3, "abc…"},
		{"a\u2028b", 0, `a\u2028b`},
		{"ççççç", 3, "ççç…"},
		{"\n\n\n\n", 2, `\x0a\x0a…`},
		{"abc", 3, "abc"},
		{"ab\u202ecd", 3, `ab\u202e…`},
	}
	for _, tt := range tests {
		if got := SafeText(tt.in, tt.width); got != tt.want {
			t.Errorf("SafeText(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
}

func TestSafeCellKeepsColourOnly(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\x1b[31mfailed\x1b[0m", "\x1b[31mfailed\x1b[0m"},
		{"\x1b[38;5;2mactive\x1b[0m", "\x1b[38;5;2mactive\x1b[0m"},
		{"\x1b[31mleft on", "\x1b[31mleft on\x1b[0m"},
		{"\x1b[2Aup", `\x1b[2Aup`},
		{"\x1b]0;title\x07", `\x1b]0;title\x07`},
		{"name\u202eeman", `name\u202eeman`},
	}
	for _, tt := range tests {
		if got := safeCell(tt.in); got != tt.want {
			t.Errorf("safeCell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestTableEscapesEveryCell: a name crafted to reorder the row it sits in
// (U+202E) or to drive the terminal reaches the table escaped, whichever
// command printed it; -o json keeps it as it is.
func TestTableEscapesEveryCell(t *testing.T) {
	const spoof = "invoice\u202egpj.exe"
	ios, _, out, _ := iostreams.Test()
	ios.SetStdoutTTY(true)
	err := New(ios, Table).Print(nil, func(tw *TableWriter) {
		tw.Header("name", "state")
		tw.Row(spoof, Style(ios, "failed"))
		tw.Row("\x1b[2Jclear\nnext", "ok")
	})
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.ContainsRune(got, '\u202e') || strings.Contains(got, "\x1b[2J") || strings.Count(got, "\n") != 3 {
		t.Errorf("table carries raw control characters:\n%q", got)
	}
	if !strings.Contains(got, `invoice\u202egpj.exe`) || !strings.Contains(got, `\x1b[2Jclear\x0anext`) {
		t.Errorf("table does not show the escaped names:\n%q", got)
	}
	if !strings.Contains(got, Style(ios, "failed")) {
		t.Errorf("the state's colour was lost:\n%q", got)
	}

	ios, _, out, _ = iostreams.Test()
	if err := New(ios, JSON).Print(map[string]string{"name": spoof}, nil); err != nil || !strings.Contains(out.String(), "\u202e") {
		t.Errorf("-o json altered the name: %q, %v", out.String(), err)
	}
}
