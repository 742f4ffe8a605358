// Package archtest holds no code: its test checks that the packages of this
// module import each other only as docs/architecture.md allows.
package archtest
