//go:build !linux

package runtime

// dropCache cannot drop a file's cached pages on this system.
func dropCache(string) bool { return false }
