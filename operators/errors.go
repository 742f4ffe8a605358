package operators

import (
	"errors"
	"fmt"
)

// ErrInvalidParameter reports an operator argument outside its domain; the
// message names the parameter.
var ErrInvalidParameter = errors.New("operators: invalid parameter")

func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", ErrInvalidParameter, name, value, want)
}
