//go:build unix

package rabbitnode

import "syscall"

// killGroup kills what remains of the process group a child led: the VM's
// helper processes normally exit with it, and must not outlive the test if
// one did not.
func killGroup(leader int) {
	_ = syscall.Kill(-leader, syscall.SIGKILL)
}

// processGroups tells whether nodes can be run and cleaned up here.
const processGroups = true

func killProcess(pid int) {
	_ = syscall.Kill(pid, syscall.SIGKILL)
}
