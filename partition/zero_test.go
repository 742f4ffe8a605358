package partition

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// exportedTypes lists the exported types declared in the package's
// non-test files.
func exportedTypes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var names []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				if ts := s.(*ast.TypeSpec); ts.Name.IsExported() {
					names = append(names, ts.Name.Name)
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// panicsNaming runs f and checks that it panics with a message naming the
// constructor to use.
func panicsNaming(t *testing.T, ctor string, f func()) {
	t.Helper()
	defer func() {
		p := recover()
		require.NotNil(t, p, "want a panic")
		require.Contains(t, p, "without "+ctor)
	}()
	f()
}

// TestZeroValues pins what the zero value of every exported type does (the
// policy of package sketch): a zero Hash panics with a message naming
// NewHash, never routes to a worker of none; a zero Config, Factory,
// DetectorFactory or Option is refused by name where it is used; the
// result and statistics types are plain data, usable at zero. The
// interfaces have no zero value to use. A new exported type fails the test
// until it is listed here.
func TestZeroValues(t *testing.T) {
	cases := map[string]func(t *testing.T){
		"Hash": func(t *testing.T) {
			var h Hash
			panicsNaming(t, "NewHash", func() { h.Route(1) })
			panicsNaming(t, "NewHash", func() { h.RouteBatch([]uint64{1}, make([]int, 1)) })
			panicsNaming(t, "NewHash", func() { h.Workers() })
			panicsNaming(t, "NewHash", func() { RouteBatch(&h, []uint64{1}, make([]int, 1)) })
		},
		"Config": func(t *testing.T) {
			_, err := Run(Config{})
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.ErrorContains(t, err, "Stream")
		},
		"Factory": func(t *testing.T) {
			var f Factory
			_, err := Run(Config{Stream: stream.FromKeys([]uint64{1}), Factory: f, Sources: 1, Workers: 2})
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.ErrorContains(t, err, "Factory")
		},
		"DetectorFactory": func(t *testing.T) {
			var f DetectorFactory
			_, err := NewDChoices(4, WithDetector(f))
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.ErrorContains(t, err, "detector")
		},
		"Option": func(t *testing.T) {
			var o Option
			_, err := NewPKG(4, o)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.ErrorContains(t, err, "option")
		},
		"HeadStats": func(t *testing.T) { require.Zero(t, HeadStats{}.Count) },
		"HeadKey":   func(t *testing.T) { require.Zero(t, HeadKey{}.P) },
		"Choice":    func(t *testing.T) { require.Empty(t, Choice{}.Kind) },
		"Sample":    func(t *testing.T) { require.Zero(t, Sample{}.Tuples) },
		"Snapshot":  func(t *testing.T) { require.Equal(t, Snapshot{}, LoadStats(nil)) },
		"Result":    func(t *testing.T) { require.Zero(t, Result{}.Imbalance) },
	}
	interfaces := []string{"BatchRouter", "Candidater", "Chooser", "Detector", "HeadReporter", "Partitioner", "Snapshotter", "Splitter"}
	for _, name := range exportedTypes(t) {
		t.Run(name, func(t *testing.T) {
			if slices.Contains(interfaces, name) {
				return
			}
			c, ok := cases[name]
			require.True(t, ok, "exported type %s has no zero-value case", name)
			c(t)
		})
	}
}
