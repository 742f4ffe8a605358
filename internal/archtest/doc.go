// Package archtest holds no code: its tests check that the packages of
// this module import each other only as docs/architecture.md allows, and
// that no non-test function is longer than 120 lines.
package archtest
