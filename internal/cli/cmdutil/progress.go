package cmdutil

import (
	"fmt"
	"io"
)

// Progress reports a long command's progress on stderr: on a terminal one
// bar redrawn in place, elsewhere (a CI log) one line per step, which a log
// keeps readable. A Progress made silent (work of one step) says nothing.
type Progress struct {
	w        io.Writer
	verb     string
	terminal bool
	shown    bool
}

// NewProgress reports on f's stderr with lines "<verb> n/total [===>  ] p%";
// show false makes it silent.
func NewProgress(f *Factory, verb string, show bool) *Progress {
	p := &Progress{verb: verb, terminal: f.IOStreams.IsStderrTTY()}
	if show {
		p.w = f.IOStreams.ErrOut
	}
	return p
}

// Set shows done of total.
func (p *Progress) Set(done, total int64) {
	if p.w == nil {
		return
	}
	p.shown = true
	line := ProgressLine(p.verb, done, total)
	if p.terminal {
		fmt.Fprintf(p.w, "\r%s", line)
		return
	}
	fmt.Fprintln(p.w, line)
}

// Done ends the redrawn line, so what follows starts on a line of its own.
// Call it on failure too.
func (p *Progress) Done() {
	if p.shown && p.terminal {
		fmt.Fprintln(p.w)
	}
}

// ProgressLine is "Replaying  1000/2345 [========>          ]  42%".
func ProgressLine(verb string, done, total int64) string {
	const width = 30
	if total < 1 {
		total = 1
	}
	done = min(max(done, 0), total)
	filled := int(width * done / total)
	bar := make([]byte, width)
	for i := range bar {
		switch {
		case i < filled:
			bar[i] = '='
		case i == filled && done < total:
			bar[i] = '>'
		default:
			bar[i] = ' '
		}
	}
	digits := len(fmt.Sprint(total))
	return fmt.Sprintf("%s %*d/%d [%s] %3d%%", verb, digits, done, total, bar, 100*done/total)
}
