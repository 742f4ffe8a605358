// Package doccheck holds no code: its tests check that the documentation
// does not rot. Every ```go block of README.md and of the user guides in
// docs/ must compile against the module, and every relative link and
// #anchor in README.md and docs/ must resolve.
package doccheck
