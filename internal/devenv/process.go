package devenv

import (
	"bytes"
	"strings"
	"sync"
)

// tailBuffer keeps the last bytes written to it, so that a server's log can be
// quoted in an error without holding all of it.
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
}

func newTailBuffer(limit int) *tailBuffer {
	return &tailBuffer{limit: limit}
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) > t.limit {
		p = p[len(p)-t.limit:]
	}
	if overflow := len(t.buf) + len(p) - t.limit; overflow > 0 {
		t.buf = append(t.buf[:0], t.buf[overflow:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// lastLines returns up to n complete lines from the end of what was kept. A
// line cut by the size limit is dropped rather than shown half.
func (t *tailBuffer) lastLines(n int) string {
	t.mu.Lock()
	data := bytes.Clone(t.buf)
	t.mu.Unlock()
	return lastLines(string(data), n, len(data) >= t.limit)
}

// lastLines returns up to n lines from the end of text, without a trailing
// newline. When truncated is set, text may begin mid-line and its first line
// is skipped.
func lastLines(text string, n int, truncated bool) string {
	text = strings.TrimRight(text, "\n")
	if truncated {
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[i+1:]
		} else {
			return ""
		}
	}
	if n <= 0 || text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
