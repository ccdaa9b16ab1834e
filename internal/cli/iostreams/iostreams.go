// Package iostreams is the CLI's one handle on the terminal: where commands
// read and write, whether output is a terminal, and whether colour is wanted.
// Tests swap in buffers with Test().
package iostreams

import (
	"bytes"
	"io"
	"os"

	"github.com/charmbracelet/x/term"
	"github.com/mattn/go-isatty"
)

// IOStreams bundles the standard streams with what is known about them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	inTTY, outTTY, errTTY bool
	colorDisabled         bool
	// outWidth is the terminal's width in cells when known; 0 asks the
	// terminal (System) or means unknown (Test).
	outWidth int
	outFd    uintptr
	hasFd    bool

	// JSONFilter, when set (--jq), replaces the JSON a command prints with
	// what the filter makes of it.
	JSONFilter JSONFilter
}

// JSONFilter rewrites a command's JSON output (output.JQ).
type JSONFilter interface {
	Write(w io.Writer, v any) error
}

// System wires the process's own streams. NO_COLOR (any non-empty value, see
// no-color.org) and TERM=dumb turn colour off.
func System() *IOStreams {
	return &IOStreams{
		In:            os.Stdin,
		Out:           os.Stdout,
		ErrOut:        os.Stderr,
		inTTY:         isTerminal(os.Stdin),
		outTTY:        isTerminal(os.Stdout),
		errTTY:        isTerminal(os.Stderr),
		colorDisabled: os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb",
		outFd:         os.Stdout.Fd(),
		hasFd:         true,
	}
}

// DefaultTerminalWidth is assumed for a terminal that does not say.
const DefaultTerminalWidth = 80

// TerminalWidth is the width tables must fit: the terminal's when output
// goes to one (DefaultTerminalWidth when it does not say), 0 (no limit)
// when output goes to a file or a pipe.
func (s *IOStreams) TerminalWidth() int {
	if !s.outTTY {
		return 0
	}
	if s.outWidth > 0 {
		return s.outWidth
	}
	if s.hasFd {
		if w, _, err := term.GetSize(s.outFd); err == nil && w > 0 {
			return w
		}
	}
	return DefaultTerminalWidth
}

// SetTerminalWidth overrides the terminal's width; tests use it.
func (s *IOStreams) SetTerminalWidth(w int) { s.outWidth = w }

// Test returns streams over buffers: stdin, stdout, stderr.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, colorDisabled: true}, in, out, errOut
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// IsStdoutTTY reports whether output goes to a terminal (a person reads it).
func (s *IOStreams) IsStdoutTTY() bool { return s.outTTY }

// IsStdinTTY reports whether a person can answer a prompt.
func (s *IOStreams) IsStdinTTY() bool { return s.inTTY }

// IsStderrTTY reports whether progress and hints on stderr reach a person.
func (s *IOStreams) IsStderrTTY() bool { return s.errTTY }

// SetStdoutTTY overrides detection; tests use it to exercise terminal output.
func (s *IOStreams) SetStdoutTTY(v bool) { s.outTTY = v }

// SetStdinTTY overrides detection.
func (s *IOStreams) SetStdinTTY(v bool) { s.inTTY = v }

// DisableColor turns colour off (--no-color).
func (s *IOStreams) DisableColor() { s.colorDisabled = true }

// ColorEnabled reports whether output may carry ANSI colour: only for a
// terminal, and never against the user's wish.
func (s *IOStreams) ColorEnabled() bool { return s.outTTY && !s.colorDisabled }
