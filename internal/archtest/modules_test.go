package archtest

import (
	"go/version"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// nested lists the repository's modules besides the root, each with the
// only other modules its whole graph (its tests' included) may hold:
// skewer's own dependency-free helpers, xxhash, and testify with its own
// requirements. The root module requires them through replace directives;
// a program that imports only the sketches gets this graph and nothing of
// the root module's (pebble, franz-go, gonum, ...).
var nested = map[string][]string{
	"sketch":          {module + "/internal/hashx", module + "/internal/u64map", "github.com/cespare/xxhash/v2", "github.com/stretchr/testify", "github.com/stretchr/objx", "go.yaml.in/yaml/v3"},
	"internal/hashx":  {"github.com/stretchr/testify", "github.com/stretchr/objx", "go.yaml.in/yaml/v3"},
	"internal/u64map": {module + "/internal/hashx", "github.com/stretchr/testify", "github.com/stretchr/objx", "go.yaml.in/yaml/v3"},
}

// nestedRuntime lists the only other modules a nested module's non-test
// code compiles.
var nestedRuntime = map[string][]string{
	"sketch":          {module + "/internal/hashx", module + "/internal/u64map", "github.com/cespare/xxhash/v2"},
	"internal/hashx":  nil,
	"internal/u64map": {module + "/internal/hashx"},
}

// goIn runs the go command with args in the repository folder dir.
func goIn(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = "../../" + dir
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go %v in %s: %v\n%s", args, dir, err, ee.Stderr)
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestNestedModules: each nested module is what nested says it is (its
// path, and a graph of only the modules it allows), its non-test code
// compiles no module but nestedRuntime's, and it needs an older Go than
// the root module, so a program on the sketches alone is not held to the
// root module's toolchain.
func TestNestedModules(t *testing.T) {
	rootGo := goIn(t, ".", "list", "-m", "-f", "{{.GoVersion}}")[0]
	for dir, allowed := range nested {
		t.Run(dir, func(t *testing.T) {
			self := goIn(t, dir, "list", "-m", "-f", "{{.Path}} {{.GoVersion}}")
			require.Len(t, self, 1)
			path, goVersion, _ := strings.Cut(self[0], " ")
			require.Equal(t, module+"/"+dir, path, "%s/go.mod's module path", dir)
			require.Negative(t, version.Compare("go"+goVersion, "go"+rootGo), "%s needs go %s, not older than the root module's %s", dir, goVersion, rootGo)
			for _, line := range goIn(t, dir, "list", "-m", "-f", "{{.Path}}{{with .Replace}} => {{.Path}}{{end}}", "all")[1:] {
				mod, repl, replaced := strings.Cut(line, " => ")
				require.Contains(t, allowed, mod, "%s's module graph holds %s", dir, mod)
				if strings.HasPrefix(mod, module+"/") {
					require.True(t, replaced && strings.HasPrefix(repl, "../"), "%s reaches %s through a replace directive to its folder, not %q", dir, mod, repl)
				}
			}
			for _, line := range goIn(t, dir, "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "./...") {
				if line != "" && line != module+"/"+dir {
					require.Contains(t, nestedRuntime[dir], line, "%s's non-test code compiles module %s", dir, line)
				}
			}
		})
	}
}
