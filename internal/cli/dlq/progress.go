package dlq

import (
	"fmt"
	"io"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
)

// progress reports a replay that takes more than one request on stderr:
// on a terminal one line redrawn in place, elsewhere (a CI log) one line
// per chunk, which a log keeps readable. A replay of one chunk says nothing.
type progress struct {
	w           io.Writer
	terminal    bool
	total, seen int
	shown       bool
}

func newProgress(f *cmdutil.Factory, total int) *progress {
	p := &progress{total: total, terminal: f.IOStreams.IsStderrTTY()}
	if total > replayChunk {
		p.w = f.IOStreams.ErrOut
	}
	return p
}

func (p *progress) advance(n int) {
	p.seen += n
	if p.w == nil {
		return
	}
	p.shown = true
	line := progressLine(p.seen, p.total)
	if p.terminal {
		fmt.Fprintf(p.w, "\r%s", line)
		return
	}
	fmt.Fprintln(p.w, line)
}

// done ends the redrawn line, so what follows starts on a line of its own.
func (p *progress) done() {
	if p.shown && p.terminal {
		fmt.Fprintln(p.w)
	}
}

func (p *progress) abort() { p.done() }

// progressLine is "Replaying  1000/2345 [========>          ]  42%".
func progressLine(seen, total int) string {
	const width = 30
	if total < 1 {
		total = 1
	}
	seen = min(max(seen, 0), total)
	filled := width * seen / total
	bar := make([]byte, width)
	for i := range bar {
		switch {
		case i < filled:
			bar[i] = '='
		case i == filled && seen < total:
			bar[i] = '>'
		default:
			bar[i] = ' '
		}
	}
	digits := len(fmt.Sprint(total))
	return fmt.Sprintf("Replaying %*d/%d [%s] %3d%%", digits, seen, total, bar, 100*seen/total)
}
