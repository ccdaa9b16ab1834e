//go:build unix && !linux

package rabbitnode

import (
	"errors"
	"syscall"
)

// childSysProcAttr puts a child in a process group of its own, so that a
// Ctrl-C in the terminal reaches only the test binary. Only Linux can also
// tie its life to ours.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// descendants needs /proc; elsewhere the VM's helpers are left to exit on
// their own, which they do when it closes their pipes.
func descendants(int) []int { return nil }

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
