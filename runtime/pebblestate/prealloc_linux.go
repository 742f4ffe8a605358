package pebblestate

import "golang.org/x/sys/unix"

// preallocate reserves n bytes for the file at fd (its size becomes n).
func preallocate(fd uintptr, n int64) error { return unix.Fallocate(int(fd), 0, 0, n) }
