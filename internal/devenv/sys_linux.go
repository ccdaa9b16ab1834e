package devenv

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// childSysProcAttr puts a server in a process group of its own, so that a
// Ctrl-C in the terminal reaches only us and we decide when and how it
// stops, and has the kernel kill it if we die without stopping it.
func childSysProcAttr(u osUser) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL,
		Credential: u.credential(),
	}
}

// processWorkingDir returns the working directory of pid. PostgreSQL changes
// into its data directory, so this identifies which cluster a postmaster
// serves.
func processWorkingDir(pid int) (string, bool) {
	dir, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
	return dir, err == nil
}
