package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxFuncLines bounds every non-test function of the repository: a
// function longer than this is a loop or a procedure to split into named
// steps (the runtime's worker is a type whose methods are its steps).
const maxFuncLines = 120

// TestFunctionLength pins that no non-test function in the repository,
// the nested modules included, spans more than maxFuncLines lines from
// its signature to its closing brace (a const or var, such as a command's
// help text, is not a function).
func TestFunctionLength(t *testing.T) {
	fset := token.NewFileSet()
	var long []string
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "../.." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
				long = append(long, fmt.Sprintf("%s: %s is %d lines", strings.TrimPrefix(path, "../../"), fd.Name.Name, n))
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, long, "functions over %d lines", maxFuncLines)
}
