//go:build !unix

package rabbitnode

import "syscall"

func childSysProcAttr() *syscall.SysProcAttr { return nil }

// killGroup has no process groups to act on.
func killGroup(int) {}

func descendants(int) []int { return nil }

func alive(int) bool { return false }

const processGroups = false

func killProcess(int) {}
