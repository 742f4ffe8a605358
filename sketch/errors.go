package sketch

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package wraps one of them, so
// callers test with errors.Is.
var (
	// ErrInvalidParameter reports a constructor or method argument outside
	// its domain; the message names the parameter and the accepted range.
	ErrInvalidParameter = errors.New("sketch: invalid parameter")
	// ErrIncompatible reports a Merge of sketches whose shapes (width, depth,
	// seed, capacity, key type) cannot be combined.
	ErrIncompatible = errors.New("sketch: incompatible sketches")
	// ErrCorrupt reports bytes that are not a valid encoding of the sketch.
	ErrCorrupt = errors.New("sketch: corrupt encoding")
	// ErrVersion reports an encoding written by a newer, unknown version.
	ErrVersion = errors.New("sketch: unsupported encoding version")
)

// invalidParam builds an ErrInvalidParameter naming the parameter, the value
// given and what was expected.
func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", ErrInvalidParameter, name, value, want)
}

// corrupt builds an ErrCorrupt with a reason.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// panicZero reports a method called on the zero value of a sketch type that
// only a constructor (or UnmarshalBinary) can build, as the standard library
// reports misuse it cannot return as an error. ctors lists what builds one.
// It is kept out of line so that the checks cost their callers a compare
// and a branch, not the string building.
//
//go:noinline
func panicZero(typ, ctors string) {
	panic("sketch: " + typ + " used without " + ctors + " (its zero value is not usable)")
}

// errZero is what Merge, AppendBinary and MarshalBinary return for a zero
// value: an ErrInvalidParameter naming the side (receiver or other).
func errZero(side, typ, ctors string) error {
	return invalidParam(side, "a zero "+typ, "a "+typ+" built by "+ctors)
}
