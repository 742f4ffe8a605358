package hotkey

import (
	"fmt"
	"slices"
	"strings"
)

// windowed are the windowed detectors by name, as streambench and the
// results name them.
var windowed = map[string]func(theta float64, window int) (*Windowed, error){
	"countmin":    NewCountMin,
	"exact":       NewWindowedExact,
	"filtered":    NewFiltered,
	"lossy":       NewLossyCounting,
	"spacesaving": NewSpaceSaving,
}

// Names lists the windowed detectors New builds, sorted: countmin, exact
// (windowed exact counts), filtered (partition's default), lossy and
// spacesaving.
func Names() []string {
	ns := make([]string, 0, len(windowed))
	for n := range windowed {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// New builds the windowed detector of the given name (see Names) with
// threshold theta and window W.
func New(name string, theta float64, window int) (*Windowed, error) {
	mk, ok := windowed[name]
	if !ok {
		return nil, invalidParam("detector", fmt.Sprintf("%q", name), "one of "+strings.Join(Names(), ", "))
	}
	return mk(theta, window)
}
