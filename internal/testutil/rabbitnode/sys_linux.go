package rabbitnode

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// childSysProcAttr puts a child in a process group of its own, so that a
// Ctrl-C in the terminal reaches only the test binary, and has the kernel
// kill it should the test binary die without stopping it.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// descendants lists the live processes below pid. The VM's port helper
// (erl_child_setup) starts a session of its own, so its children escape
// the node's process group and must be found by parentage.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parent, state, ok := procStat(child); ok && state != 'Z' {
			children[parent] = append(children[parent], child)
		}
	}
	var found []int
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		found = append(found, children[next]...)
		queue = append(queue, children[next]...)
	}
	return found
}

// alive reports whether pid runs; a zombie nobody reaped does not.
func alive(pid int) bool {
	_, state, ok := procStat(pid)
	return ok && state != 'Z'
}

// procStat reads a process's parent and state from /proc/<pid>/stat.
func procStat(pid int) (parent int, state byte, ok bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(data[end+1:])
	if len(fields) < 2 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	parent, err = strconv.Atoi(string(fields[1]))
	if err != nil {
		return 0, 0, false
	}
	return parent, fields[0][0], true
}
