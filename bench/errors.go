package bench

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidParameter reports a configuration value outside its domain. The
// message names the parameter (as the command line spells it) and, for
// enumerations, every valid choice.
var ErrInvalidParameter = errors.New("bench: invalid parameter")

func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", ErrInvalidParameter, name, value, want)
}

func invalidChoice(name, value string, choices []string) error {
	return fmt.Errorf("%w: %s = %q, want one of %s", ErrInvalidParameter, name, value, strings.Join(choices, ", "))
}
