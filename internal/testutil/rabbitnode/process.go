package rabbitnode

import (
	"os"
	"os/exec"
	"time"

	"github.com/hubctl/hubctl/internal/childproc"
)

// process is a child of the test binary. Stop it with stopAndSweep, not
// the embedded Stop, which leaves its helper processes running.
type process struct{ *childproc.Process }

func startProcess(cmd *exec.Cmd) (*process, error) {
	proc, err := childproc.Start(cmd)
	if err != nil {
		return nil, err
	}
	return &process{proc}, nil
}

// stopAndSweep sends sig, waits up to grace for the process to exit, kills
// it if it has not, and then kills whatever it left in its process group
// and below it. It reports whether sig alone ended it.
func (p *process) stopAndSweep(sig os.Signal, grace time.Duration) (gentle bool) {
	// Taken first: once the process is gone, its orphans are re-parented and
	// no longer found below it.
	family := descendants(p.Pid())
	gentle = p.Stop(nil, childproc.Step{Signal: sig, Grace: grace})
	killGroup(p.Pid())
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
