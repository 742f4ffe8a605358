package sketch

import "errors"

// ErrEmpty reports a query that needs at least one value (a quantile, a
// CDF) on a sketch that has none. It is returned wrapped; test with
// errors.Is.
var ErrEmpty = errors.New("sketch: empty sketch")
