//go:build unix

package certfile

import (
	"os"
	"syscall"
)

// fileID is the file's inode: a file renamed over another (how secret
// mounts and cert-manager replace certificates) is a new inode even when
// its size and modification time, kept at the kernel's coarse clock
// resolution, match the old one's.
func fileID(info os.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
