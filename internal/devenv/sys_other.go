//go:build !unix

package devenv

import (
	"io/fs"
	"os"
	"syscall"
)

// serverUser runs the server as ourselves: only unix has a root to avoid.
func serverUser() (osUser, error) { return osUser{}, nil }

func childSysProcAttr(osUser) *syscall.SysProcAttr { return nil }

func fileOwner(fs.FileInfo) (uid, gid uint32, ok bool) { return 0, 0, false }

func processExists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}

// immediateShutdown has no gentler form than a kill without unix signals.
var immediateShutdown = os.Kill

func processWorkingDir(int) (string, bool) { return "", false }
