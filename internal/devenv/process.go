package devenv

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"
)

// child is a server process whose lifetime is tied to ours.
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // the result of Wait; read only after done is closed
}

// startChild starts cmd from a goroutine locked to its OS thread until the
// process exits. Linux sends the parent-death signal when the thread that
// forked the child ends, not when the process does, and the Go runtime ends a
// thread whose locked goroutine returns. Without the lock, any goroutine that
// happened to exit while locked on the forking thread would take the server
// down with it; with it, the thread ends only after Wait, when there is no
// child left to signal.
func startChild(cmd *exec.Cmd) (*child, error) {
	c := &child{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // deliberately never unlocked, see above
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		c.err = cmd.Wait()
		close(c.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return c, nil
}

// exited reports whether the process has already ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stopStep is one escalation of a shutdown: a signal and how long to let it
// work.
type stopStep struct {
	signal os.Signal
	grace  time.Duration
}

// stop takes the steps in turn until the process exits, and kills it if none
// worked. Closing cancel cuts every wait short. It reports whether the
// process ended within the first step, the gentle one.
func (c *child) stop(cancel <-chan struct{}, steps ...stopStep) (gentle bool) {
	for i, step := range steps {
		if c.exited() {
			return i == 0
		}
		// An error here means the process is already gone; done will say so.
		_ = c.cmd.Process.Signal(step.signal)
		if c.await(cancel, step.grace) {
			return i == 0
		}
	}
	_ = c.cmd.Process.Kill()
	<-c.done
	return false
}

// await waits up to grace for the process to exit, or until cancel closes.
func (c *child) await(cancel <-chan struct{}, grace time.Duration) bool {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-c.done:
		return true
	case <-cancel:
		return c.exited()
	case <-timer.C:
		return false
	}
}

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
