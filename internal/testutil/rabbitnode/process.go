package rabbitnode

import (
	"os"
	"os/exec"
	"runtime"
	"time"
)

// process is a child whose lifetime is tied to ours.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // Wait's result; read only after done is closed
}

// startProcess starts cmd from a goroutine locked to its OS thread until
// the process exits. Linux sends the parent-death signal when the thread
// that forked the child ends, not the process, and the Go runtime ends a
// thread whose locked goroutine returns: without the lock, any goroutine
// exiting while locked to the forking thread would kill the node.
func startProcess(cmd *exec.Cmd) (*process, error) {
	p := &process{cmd: cmd, done: make(chan struct{})}
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

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends sig, waits up to grace for the process to exit, kills it if it
// has not, and then kills whatever it left in its process group. It reports
// whether sig alone ended it.
func (p *process) stop(sig os.Signal, grace time.Duration) (gentle bool) {
	gentle = true
	family := descendants(p.cmd.Process.Pid)
	if !p.exited() {
		// An error means it is already gone; done will say so.
		_ = p.cmd.Process.Signal(sig)
		timer := time.NewTimer(grace)
		select {
		case <-p.done:
		case <-timer.C:
			gentle = false
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		timer.Stop()
	}
	killGroup(p.cmd.Process.Pid)
	awaitOrKill(family, helperGrace)
	return gentle
}

// helperGrace is how long the VM's helper processes get to notice that it
// is gone before they are killed.
const helperGrace = 5 * time.Second

// awaitOrKill waits up to grace for pids to exit and kills those that do
// not.
func awaitOrKill(pids []int, grace time.Duration) {
	deadline := time.Now().Add(grace)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(pollInterval)
		}
		if alive(pid) {
			killProcess(pid)
		}
	}
}
