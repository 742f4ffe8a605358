//go:build !linux

package pebblestate

import "errors"

// preallocate is not available here: the ballast is written as zeros.
func preallocate(uintptr, int64) error { return errors.ErrUnsupported }
