//go:build unix && !linux

package devenv

import "syscall"

// childSysProcAttr puts a server in a process group of its own, so that a
// Ctrl-C in the terminal reaches only us and we decide when and how it
// stops. Only Linux can also tie its life to ours.
func childSysProcAttr(u osUser) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: u.credential()}
}

// processWorkingDir is not available without /proc.
func processWorkingDir(int) (string, bool) { return "", false }
