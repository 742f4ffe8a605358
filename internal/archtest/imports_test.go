package archtest

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/skewerhq/skewer"

// allowed lists, for each package of the core, the module's packages it may
// depend on (directly or not). Anything else of the module, and any Kafka
// client, is a violation of the house plan.
var allowed = map[string][]string{
	"sketch":    {"internal/hashx", "internal/u64map"},
	"datasets":  {"internal/hashx", "internal/u64map", "sketch"},
	"partition": {"internal/hashx", "internal/u64map", "internal/hotkey", "sketch", "datasets"},
	"operators": {"internal/hashx", "internal/u64map", "sketch", "datasets"},
	"runtime":   {"internal/hashx", "internal/u64map", "internal/hotkey", "sketch", "datasets", "partition", "operators"},
}

func TestHousePlan(t *testing.T) {
	for pkg, ok := range allowed {
		t.Run(pkg, func(t *testing.T) {
			deps := listDeps(t, module+"/"+pkg)
			for _, d := range deps {
				require.NotContains(t, d, "franz-go", "%s must not compile a Kafka client", pkg)
				rel, mine := strings.CutPrefix(d, module+"/")
				if !mine || rel == pkg {
					continue
				}
				require.Contains(t, ok, rel, "%s depends on %s, which docs/architecture.md does not allow", pkg, rel)
			}
		})
	}
}

// listDeps returns the import paths pkg depends on, tests excluded.
func listDeps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath", pkg).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go list %s: %v\n%s", pkg, err, ee.Stderr)
	}
	require.NoError(t, err)
	var deps []string
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct{ ImportPath string }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		deps = append(deps, p.ImportPath)
	}
	require.NotEmpty(t, deps)
	return deps
}
