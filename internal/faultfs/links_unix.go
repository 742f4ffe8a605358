//go:build unix

package faultfs

import (
	"os"
	"syscall"
)

// links returns the file's hard-link count.
func links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
