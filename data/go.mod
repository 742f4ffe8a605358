// This folder holds data only (the real data sets the tests and benchmarks
// read) and is never imported. It is a module of its own so that the module
// zip of github.com/skewerhq/skewer, what `go get` downloads, leaves it out.
module github.com/skewerhq/skewer/data

go 1.26.0
