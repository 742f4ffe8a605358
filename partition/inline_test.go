package partition

import (
	"os"
	"os/exec"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFixedHeadRouteInlines guards the inlining that keeps the fixed-head
// path of D-Choices and W-Choices (a hotkey.FixedHead detector, such as the
// oracle of BenchmarkRoute) free of calls: Route tests the head's filter and
// probes its own copy of the head, both inlined, where a call per tuple
// would cost several percent. It asks the compiler, as
// `go build -gcflags=-m ./partition/` does.
func TestFixedHeadRouteInlines(t *testing.T) {
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to ask the compiler")
	out, err := exec.Command(goBin, "build", "-gcflags=-m", "-o", os.DevNull, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, want := range []string{
		`dchoices\.go:\d+:\d+: inlining call to hotkey\.\(\*Filter\)\.MayContain`,
		`headall\.go:\d+:\d+: inlining call to hotkey\.\(\*Filter\)\.MayContain`,
		`headall\.go:\d+:\d+: inlining call to u64map\.\(\*Map\[go\.shape\.float64\]\)\.Get`,
	} {
		require.Regexp(t, regexp.MustCompile(`(?m)^(\./|partition/)?`+want+`$`), string(out))
	}
}
