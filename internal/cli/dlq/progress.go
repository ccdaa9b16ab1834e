package dlq

import "github.com/hubctl/hubctl/internal/cli/cmdutil"

// progress counts a replay's ids on stderr (cmdutil.Progress); a replay
// of one chunk says nothing.
type progress struct {
	bar         *cmdutil.Progress
	total, seen int
}

func newProgress(f *cmdutil.Factory, total int) *progress {
	return &progress{bar: cmdutil.NewProgress(f, "Replaying", total > replayChunk), total: total}
}

func (p *progress) advance(n int) {
	p.seen += n
	p.bar.Set(int64(p.seen), int64(p.total))
}

func (p *progress) done() { p.bar.Done() }

func (p *progress) abort() { p.bar.Done() }
