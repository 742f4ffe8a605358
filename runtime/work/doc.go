// Package work models per-record processing work for experiments: a
// stage charged a Cost (runtime.WithCost) burns CPU per record (Spin) or
// behaves as a single-server queue of a fixed service time per record
// (ServiceTime), so that skew shows as it would with real work on a
// machine with fewer cores than workers. It is the harness's knob
// (streambench run -work); a production job charges nothing.
//
// A Cost is a value, safe for concurrent use; Burn and SpinPerNanosecond
// only use the CPU.
package work
