package datasets

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns wraps one of them (or,
// for a file that cannot be opened, the os error, which names the path), so
// callers test with errors.Is.
var (
	// ErrInvalidParameter reports a constructor argument outside its domain;
	// the message names the parameter, the value and the accepted range.
	ErrInvalidParameter = errors.New("datasets: invalid parameter")
	// ErrFormat reports a data file that does not follow its format; the
	// message names the file and the line.
	ErrFormat = errors.New("datasets: malformed data file")
	// ErrEmpty reports a data file that holds no keys.
	ErrEmpty = errors.New("datasets: empty data file")
)

// invalidParam builds an ErrInvalidParameter naming the parameter, the value
// given and what was expected.
func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", ErrInvalidParameter, name, value, want)
}

// checkLength validates a stream length parameter.
func checkLength(n int64) error {
	if n < 0 {
		return invalidParam("n", n, ">= 0 (the number of records)")
	}
	return nil
}
