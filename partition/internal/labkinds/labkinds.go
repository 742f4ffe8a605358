// Package labkinds is the door through which package partition hands its
// research kinds (dchoices-paper, rr-head) to package partitionlab and to
// no other package: they share partition's routing code, yet are not
// partition's kinds (partition.Kinds, New and NewFactory do not know
// them). Package partition sets both variables when it initialises, so
// they are set before any package that imports partition runs; nothing
// else writes them, and they are read only after.
package labkinds

// Kinds names the research kinds, sorted.
var Kinds []string

// NewFactory is partition's NewFactory for the research kinds: a
// func(kind string, opts ...partition.Option) (partition.Factory, error),
// held as any because this package cannot name partition's types
// (partition imports it).
var NewFactory any
