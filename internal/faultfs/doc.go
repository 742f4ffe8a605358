// Package faultfs holds Pebble filesystems (vfs.FS) that fail the way
// real disks do, for the tests of the state backends: Quota answers
// ENOSPC once the bytes written through it pass a limit, as a full disk
// does.
//
// It is for tests only: no package's non-test code imports it
// (internal/archtest checks). A Quota is safe for concurrent use.
package faultfs
