package doccheck

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

const module = "github.com/skewerhq/skewer"

// snippetPackage is the package every block is compiled as: not main, so
// that go build compiles the blocks without linking a program per block
// (func main is then an ordinary function).
const snippetPackage = "snippet"

// imports maps the package names a snippet may use unqualified by an import
// clause to their import paths; a snippet that needs another package is
// written as a complete file (starting with its package clause).
var imports = map[string]string{
	"sketch":    module + "/sketch",
	"datasets":  module + "/datasets",
	"stream":    module + "/stream",
	"partition": module + "/partition",
	"operators": module + "/operators",
	"runtime":   module + "/runtime",
	"kafka":     module + "/kafka",
	"kgo":       "github.com/twmb/franz-go/pkg/kgo",
	"kfake":     "github.com/twmb/franz-go/pkg/kfake",
	"binary":    "encoding/binary",
	"context":   "context",
	"errors":    "errors",
	"fmt":       "fmt",
	"iter":      "iter",
	"math":      "math",
	"os":        "os",
	"rand":      "math/rand/v2",
	"slices":    "slices",
	"strings":   "strings",
	"sync":      "sync",
	"time":      "time",
}

// block is one fenced ```go block of a Markdown file.
type block struct {
	file string // the Markdown file, relative to the module root
	line int    // the line of the block's first line of code (1-based)
	code string
}

// TestGoBlocksCompile builds every ```go block of README.md and of the
// guides in docs/ (lab notes in docs/notes/ excepted) against the module.
// A block is a function body (wrapped in func main), top-level
// declarations (a line starting with "func "), or a whole file (starting
// with its package clause). Compile errors name the Markdown file and line.
func TestGoBlocksCompile(t *testing.T) {
	root := moduleRoot(t)
	var blocks []block
	for _, rel := range guideFiles(t, root) {
		bs, err := goBlocks(root, rel)
		require.NoError(t, err)
		blocks = append(blocks, bs...)
	}
	require.NotEmpty(t, blocks, "no ```go block found: the extraction is broken")
	readme := 0
	for _, b := range blocks {
		if b.file == "README.md" {
			readme++
		}
	}
	require.GreaterOrEqual(t, readme, 5, "README.md has a Go block per package tour")
	if out, err := compile(t, root, blocks); err != nil {
		t.Fatalf("documentation code does not compile (%v):\n%s", err, out)
	}
}

// TestBrokenBlockFails pins the check itself: a block that does not compile
// fails the build with the Markdown file and line of the error, while the
// blocks beside it (one of each form) compile.
func TestBrokenBlockFails(t *testing.T) {
	root := moduleRoot(t)
	good, err := goBlocks(root, "internal/doccheck/testdata/forms.md")
	require.NoError(t, err)
	require.Len(t, good, 3)
	out, err := compile(t, root, good)
	require.NoError(t, err, out)

	broken, err := goBlocks(root, "internal/doccheck/testdata/broken.md")
	require.NoError(t, err)
	require.Len(t, broken, 2)
	out, err = compile(t, root, broken)
	require.Error(t, err)
	// The uncalled print is on line 9 of broken.md, the unused variable on
	// line 16: both blocks are reported, each at its own line.
	require.Contains(t, out, "internal/doccheck/testdata/broken.md:9:")
	require.Contains(t, out, "must be called")
	require.Contains(t, out, "internal/doccheck/testdata/broken.md:16:")
	require.Contains(t, out, "declared and not used")
}

// TestGoBlocksExtracted pins the extraction: fences indented in a list,
// other languages and unterminated fences.
func TestGoBlocksExtracted(t *testing.T) {
	root := moduleRoot(t)
	bs, err := goBlocks(root, "internal/doccheck/testdata/forms.md")
	require.NoError(t, err)
	require.Equal(t, 8, bs[0].line)
	require.Equal(t, "fmt.Println(sketch.HashString(\"cat\") != 0)\n", bs[0].code)
	require.Equal(t, 14, bs[1].line)
	require.True(t, strings.HasPrefix(bs[2].code, "package main\n"), "list indentation removed")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "open.md"), []byte("```go\nx := 1\n"), 0o644))
	_, err = goBlocks(dir, "open.md")
	require.ErrorContains(t, err, "open.md:1: unterminated")
}

// moduleRoot is the directory holding the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "go.mod not found above the test's directory")
		dir = parent
	}
}

// guideFiles lists README.md and the Markdown files of docs/, relative to
// root, without the lab notes of docs/notes/.
func guideFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() && rel == "docs/notes" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(rel, ".md") {
			files = append(files, rel)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// goBlocks returns the fenced ```go blocks of the Markdown file rel (relative
// to root). A fence may be indented (inside a list item): that indentation
// is removed from the block's lines.
func goBlocks(root, rel string) ([]block, error) {
	f, err := os.Open(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		blocks []block
		open   bool   // inside a fence
		isGo   bool   // the open fence is a ```go one
		fence  string // the open fence's marker, ``` or ~~~ (or longer)
		indent int    // the open fence's indentation
		start  int    // the open fence's line
		code   strings.Builder
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " \t")
		if !open {
			marker := fenceMarker(trimmed)
			if marker == "" {
				continue
			}
			open, fence, indent, start = true, marker, len(line)-len(trimmed), n
			info := strings.Fields(strings.TrimPrefix(trimmed, marker))
			isGo = len(info) > 0 && info[0] == "go"
			code.Reset()
			continue
		}
		if closesFence(trimmed, fence) {
			if isGo {
				blocks = append(blocks, block{file: rel, line: start + 1, code: code.String()})
			}
			open = false
			continue
		}
		if isGo {
			cut := min(indent, len(line)-len(strings.TrimLeft(line, " \t")))
			code.WriteString(line[cut:])
			code.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if open {
		return nil, fmt.Errorf("%s:%d: unterminated code fence", rel, start)
	}
	return blocks, nil
}

// fenceMarker returns the fence a trimmed line opens (three or more
// backticks or tildes), or "".
func fenceMarker(trimmed string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(trimmed) && trimmed[n] == c {
			n++
		}
		if n >= 3 {
			return trimmed[:n]
		}
	}
	return ""
}

// closesFence reports whether a trimmed line closes the fence opened with
// marker: at least as many of the same characters, and nothing else.
func closesFence(trimmed, marker string) bool {
	return strings.HasPrefix(trimmed, marker) && strings.TrimSpace(strings.TrimLeft(trimmed, marker[:1])) == ""
}

// program turns a block into a Go file whose positions are the block's own
// (a //line directive), so that compile errors name the Markdown file and
// line. A block that starts with its package clause is used as it is,
// renamed to snippetPackage; otherwise its imports are inferred from the
// package names it qualifies identifiers with (comments and strings aside)
// and the block becomes the body of a function main, or, when a line starts
// with "func ", the file's top-level declarations.
func program(b block) (string, error) {
	var (
		fset    = token.NewFileSet()
		file    = fset.AddFile(b.file, -1, len(b.code))
		sc      scanner.Scanner
		first   token.Token
		prev    string
		used    = map[string]bool{}
		bad     error
		pkgName = -1 // offset of the package clause's name, in a whole file
	)
	sc.Init(file, []byte(b.code), func(pos token.Position, msg string) {
		bad = fmt.Errorf("%s:%d: %s", b.file, b.line+pos.Line-1, msg)
	}, 0)
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if first == token.PACKAGE && pkgName < 0 && tok == token.IDENT {
			pkgName = file.Offset(pos)
		}
		if first == token.ILLEGAL && tok != token.SEMICOLON {
			first = tok
		}
		if tok == token.PERIOD && imports[prev] != "" {
			used[prev] = true
		}
		prev = ""
		if tok == token.IDENT {
			prev = lit
		}
	}
	if bad != nil {
		return "", bad
	}
	directive := fmt.Sprintf("//line %s:%d:1\n", b.file, b.line)
	if first == token.PACKAGE {
		if pkgName < 0 {
			return "", fmt.Errorf("%s:%d: a package clause without a name", b.file, b.line)
		}
		name := pkgName + strings.IndexFunc(b.code[pkgName:], func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
		return directive + b.code[:pkgName] + snippetPackage + b.code[name:], nil
	}
	var src strings.Builder
	src.WriteString("package " + snippetPackage + "\n\n")
	names := make([]string, 0, len(used))
	for name := range used {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(&src, "import %q\n", imports[name])
	}
	decls := false
	for _, line := range strings.Split(b.code, "\n") {
		decls = decls || strings.HasPrefix(line, "func ")
	}
	switch {
	case !decls:
		src.WriteString("\nfunc main() {\n" + directive + b.code + "}\n")
	case strings.Contains(b.code, "\nfunc main()") || strings.HasPrefix(b.code, "func main()"):
		src.WriteString("\n" + directive + b.code)
	default:
		src.WriteString("\n" + directive + b.code + "\nfunc main() {}\n")
	}
	return src.String(), nil
}

// compile builds each block as its own package, all in one go build with an
// overlay (the packages exist only in the overlay, under
// internal/doccheck/snippets/, so nothing is written to the module), and
// returns the build's output.
func compile(t *testing.T, root string, blocks []block) (string, error) {
	t.Helper()
	gen := filepath.Join(root, "internal", "doccheck", "snippets")
	_, err := os.Stat(gen)
	require.True(t, errors.Is(err, os.ErrNotExist), "%s must not exist: the snippets' packages are virtual", gen)
	tmp := t.TempDir()
	replace := map[string]string{}
	var pkgs []string
	for i, b := range blocks {
		src, err := program(b)
		if err != nil {
			return err.Error(), err
		}
		name := filepath.Join(tmp, fmt.Sprintf("b%03d.go", i))
		require.NoError(t, os.WriteFile(name, []byte(src), 0o644))
		dir := fmt.Sprintf("b%03d", i)
		replace[filepath.Join(gen, dir, "main.go")] = name
		pkgs = append(pkgs, "./internal/doccheck/snippets/"+dir)
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	require.NoError(t, err)
	overlayFile := filepath.Join(tmp, "overlay.json")
	require.NoError(t, os.WriteFile(overlayFile, overlay, 0o644))
	cmd := exec.Command("go", append([]string{"build", "-overlay", overlayFile}, pkgs...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	return string(out), err
}
