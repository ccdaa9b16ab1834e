package output

import "testing"

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
