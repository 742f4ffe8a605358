package archtest

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/skewerhq/skewer"

// core lists the packages a user of the runtime compiles: none may depend
// on a module other than coreModules.
var core = []string{"internal/hashx", "internal/u64map", "internal/wire", "internal/clock", "stream", "sketch", "operators", "partition", "partition/hotkey", "partition/internal/labkinds", "runtime", "runtime/autoscale", "runtime/checkpoint", "runtime/work"}

// coreModules are the only other modules the core may compile.
var coreModules = []string{"github.com/cespare/xxhash/v2"}

// testOnly lists the packages that only tests may import.
var testOnly = []string{"internal/testkit", "internal/faultfs"}

// row is one package's line of docs/architecture.md's table.
type row struct {
	pkgs, modules []string
}

// architectureTable reads the package table of docs/architecture.md:
// `package` | what it is | module packages | other modules, lists
// comma-separated.
func architectureTable(t *testing.T) map[string]row {
	t.Helper()
	f, err := os.Open("../../docs/architecture.md")
	require.NoError(t, err)
	defer f.Close()
	rows := map[string]row{}
	sc := bufio.NewScanner(f)
	inTable := false // the package table alone, not the tables after it
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "| package |") {
			inTable = true
		} else if !strings.HasPrefix(line, "|") {
			inTable = false
		}
		if !inTable || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		require.Len(t, cells, 4, "docs/architecture.md: a table row has four cells: %s", line)
		pkg := strings.Trim(strings.TrimSpace(cells[0]), "`")
		require.NotContains(t, rows, pkg, "docs/architecture.md lists %s twice", pkg)
		rows[pkg] = row{pkgs: list(cells[2]), modules: list(cells[3])}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, rows)
	return rows
}

func list(cell string) []string {
	var out []string
	for _, s := range strings.Split(cell, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// goList runs go list with args and returns its output lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go list %v: %v\n%s", args, err, ee.Stderr)
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// modules maps every import path the module's packages depend on to the
// module that provides it ("" for the standard library).
func modules(t *testing.T) map[string]string {
	m := map[string]string{}
	for _, line := range goList(t, "-deps", "-f", "{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}", module+"/...") {
		path, mod, _ := strings.Cut(line, " ")
		m[path] = mod
	}
	return m
}

// TestArchitectureTable: every package of the module has a row in
// docs/architecture.md's table, every row names a package, and each row's
// lists are exactly the package's direct imports (non-test code): the
// module's packages, and the other modules providing the rest.
func TestArchitectureTable(t *testing.T) {
	rows := architectureTable(t)
	mods := modules(t)
	seen := map[string]bool{}
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...") {
		path, imports, _ := strings.Cut(line, " ")
		pkg := strings.TrimPrefix(path, module+"/")
		seen[pkg] = true
		t.Run(pkg, func(t *testing.T) {
			r, ok := rows[pkg]
			require.True(t, ok, "docs/architecture.md has no row for %s", pkg)
			var pkgs, others []string
			for _, imp := range strings.Fields(imports) {
				if rel, mine := strings.CutPrefix(imp, module+"/"); mine {
					pkgs = append(pkgs, rel)
				} else if mod := mods[imp]; mod != "" && !slices.Contains(others, mod) {
					others = append(others, mod)
				}
			}
			slices.Sort(pkgs)
			slices.Sort(others)
			require.Equal(t, r.pkgs, pkgs, "%s: module packages in docs/architecture.md against its imports", pkg)
			require.Equal(t, r.modules, others, "%s: other modules in docs/architecture.md against its imports", pkg)
		})
	}
	for pkg := range rows {
		require.True(t, seen[pkg], "docs/architecture.md has a row for %s, which is not a package of the module", pkg)
	}
}

// TestCoreDependencies: a program that imports only the core (a job on the
// runtime, the sketches) compiles no module but coreModules, and no
// package of the module outside the core: not the generators (roaring),
// not the harness (gonum, HdrHistogram), not a Kafka client.
func TestCoreDependencies(t *testing.T) {
	mods := modules(t)
	for _, pkg := range core {
		t.Run(pkg, func(t *testing.T) {
			for _, dep := range goList(t, "-deps", module+"/"+pkg) {
				if rel, mine := strings.CutPrefix(dep, module+"/"); mine {
					require.Contains(t, core, rel, "%s depends on %s, outside the core", pkg, rel)
				} else if mod := mods[dep]; mod != "" {
					require.Contains(t, coreModules, mod, "%s compiles %s (module %s)", pkg, dep, mod)
				}
			}
		})
	}
}

// TestTestOnlyPackages: no package's non-test code depends on a test-only
// package (tests may import it: go list -deps leaves them out).
func TestTestOnlyPackages(t *testing.T) {
	lines := goList(t, "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"/...")
	require.Greater(t, len(lines), len(core), "go list saw the module's packages")
	for _, line := range lines {
		pkg, deps, _ := strings.Cut(line, " ")
		for _, dep := range strings.Fields(deps) {
			rel, mine := strings.CutPrefix(dep, module+"/")
			require.False(t, mine && slices.Contains(testOnly, rel), "%s depends on %s, which only tests may import", pkg, rel)
		}
	}
}
