//go:build unix

package devenv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// serverUser returns who initdb and postgres must run as: ourselves, unless
// we are root, which PostgreSQL refuses; then the "postgres" OS user.
func serverUser() (osUser, error) {
	if os.Geteuid() != 0 {
		return osUser{}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return osUser{}, errors.New("running as root, which PostgreSQL refuses, and there is no \"postgres\" OS user " +
			"to run it as: create one (useradd --system postgres) or run as a regular user")
	}
	uid, errUID := strconv.ParseUint(u.Uid, 10, 32)
	gid, errGID := strconv.ParseUint(u.Gid, 10, 32)
	if errUID != nil || errGID != nil {
		return osUser{}, fmt.Errorf("OS user postgres has a non-numeric uid %q or gid %q", u.Uid, u.Gid)
	}
	su := osUser{name: u.Username, uid: uint32(uid), gid: uint32(gid), switchTo: true}
	// Supplementary groups only widen what the server may reach; failing to
	// list them just makes the reachability check stricter.
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil {
				su.groups = append(su.groups, uint32(g))
			}
		}
	}
	return su, nil
}

// credential is the SysProcAttr credential that runs a child as u, or nil to
// run it as ourselves.
func (u osUser) credential() *syscall.Credential {
	if !u.switchTo {
		return nil
	}
	return &syscall.Credential{Uid: u.uid, Gid: u.gid, Groups: u.groups}
}

// fileOwner returns the numeric owner of a file.
func fileOwner(fi fs.FileInfo) (uid, gid uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return st.Uid, st.Gid, true
}

// processExists reports whether pid names a live (or not yet reaped) process.
// EPERM means it exists but belongs to someone else.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// immediateShutdown makes the postmaster SIGQUIT its children and exit at
// once, without a checkpoint: the step before SIGKILL, which would leave its
// children to notice on their own that it is gone.
var immediateShutdown os.Signal = syscall.SIGQUIT
