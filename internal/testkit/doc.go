// Package testkit holds the workloads and exact models that the tests of
// several packages share: seeded Zipf record streams and the
// single-threaded windowed counts and sessions the parallel results are
// checked against.
//
// It is for tests only: no package's non-test code imports it
// (internal/archtest checks). Everything here is deterministic for its
// arguments and safe for concurrent use.
package testkit
