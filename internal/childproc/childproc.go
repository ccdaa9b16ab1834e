// Package childproc runs server processes whose lifetime is tied to ours:
// it starts them so that Linux's parent-death signal fires only when we are
// done with them, and stops them by escalating signals.
package childproc

import (
	"os"
	"os/exec"
	"runtime"
	"time"
)

// Process is a started child. Its methods are safe for concurrent use.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // Wait's result; read only after done is closed
}

// Start starts cmd from a goroutine locked to its OS thread until the
// process exits. Linux sends the parent-death signal when the thread that
// forked the child ends, not when the process does, and the Go runtime ends
// a thread whose locked goroutine returns. Without the lock, any goroutine
// that happened to exit while locked on the forking thread would take the
// child down with it; with it, the thread ends only after Wait, when there
// is no child left to signal.
func Start(cmd *exec.Cmd) (*Process, error) {
	p := &Process{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // deliberately never unlocked, see above
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// Pid is the process's id. Once Done is closed it may name another process.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process. An error most often means that it has
// already exited.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has already ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is Wait's result once the process has exited: nil for a zero exit
// status, an *exec.ExitError otherwise. It is nil while the process runs.
func (p *Process) Err() error {
	if !p.Exited() {
		return nil
	}
	return p.err
}

// Step is one escalation of a shutdown: a signal and how long to let it
// work.
type Step struct {
	Signal os.Signal
	Grace  time.Duration
}

// Stop takes the steps in turn until the process exits, and kills it if
// none worked. Closing cancel cuts every wait short; a nil cancel never
// does. It reports whether the process ended within the first step, the
// gentle one, which an already exited process did.
func (p *Process) Stop(cancel <-chan struct{}, steps ...Step) (gentle bool) {
	for i, step := range steps {
		if p.Exited() {
			return i == 0
		}
		// An error here means the process is already gone; done will say so.
		_ = p.Signal(step.Signal)
		if p.await(cancel, step.Grace) {
			return i == 0
		}
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return false
}

// await waits up to grace for the process to exit, or until cancel closes.
func (p *Process) await(cancel <-chan struct{}, grace time.Duration) bool {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
		return true
	case <-cancel:
		return p.Exited()
	case <-timer.C:
		return false
	}
}
