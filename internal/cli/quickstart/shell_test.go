package quickstart_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// shellWords splits a README command line as sh would for the lines a
// quickstart holds: words separated by blanks, '...' and "..." quoting
// (no expansion inside either), and a # that starts a word beginning a
// comment. Anything needing more of the shell is refused, so the README
// cannot grow a line this test would misread.
func shellWords(line string) ([]string, error) {
	var (
		words   []string
		current strings.Builder
		inWord  bool
	)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, current.String())
				current.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			return words, nil
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				return nil, errors.New("unterminated quote")
			}
			quoted := line[i+1 : i+1+end]
			if c == '"' && strings.ContainsAny(quoted, "$`\\") {
				return nil, errors.New("expansion inside double quotes is not supported")
			}
			current.WriteString(quoted)
			inWord = true
			i += end + 1
		case strings.IndexByte("$`\\|&;()*?[]<>", c) >= 0:
			return nil, errors.New("shell syntax beyond plain words and quotes: " + string(c))
		default:
			current.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, current.String())
	}
	return words, nil
}

func TestShellWords(t *testing.T) {
	cases := []struct {
		line    string
		want    []string
		wantErr bool
	}{
		{"make dev", []string{"make", "dev"}, false},
		{"  hubctl   pull x --follow  ", []string{"hubctl", "pull", "x", "--follow"}, false},
		{`hubctl events produce --data '{"amount":1000}'`, []string{"hubctl", "events", "produce", "--data", `{"amount":1000}`}, false},
		{`a "b c" d'e f'g`, []string{"a", "b c", "de fg"}, false},
		{"hubctl dev # the hub", []string{"hubctl", "dev"}, false},
		{"a b#c", []string{"a", "b#c"}, false},
		{"# only a comment", nil, false},
		{"''", []string{""}, false},
		{"echo 'open", nil, true},
		{"echo $HOME", nil, true},
		{`echo "$HOME"`, nil, true},
		{"a | b", nil, true},
		{"a > b", nil, true},
		{"a && b", nil, true},
		{"ls *.go", nil, true},
	}
	for _, tc := range cases {
		got, err := shellWords(tc.line)
		if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
			t.Errorf("shellWords(%q) = %q, %v; want %q (error %v)", tc.line, got, err, tc.want, tc.wantErr)
		}
	}
}
