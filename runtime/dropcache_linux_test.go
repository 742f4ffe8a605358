package runtime

import (
	"os"
	"syscall"
)

// dropCache asks the kernel to drop the cached pages of the file at path
// (posix_fadvise DONTNEED: clean pages of this file only), so that the
// next read comes from the disk. It reports whether the kernel took the
// advice.
func dropCache(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	const fadvDontNeed = 4
	_, _, errno := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0)
	return errno == 0
}
