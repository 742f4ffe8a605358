package sketch

import (
	"os"
	"os/exec"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHyperLogLogAddHashInlines guards the inlining decision that makes
// dense AddHash cost a caller no call (BenchmarkHyperLogLogAddHashVsFloor):
// AddHash sits at cost 75 of Go's budget of 80, so a small edit can tip it
// over. It asks the compiler, as `go -C sketch build -gcflags=-m .` does.
func TestHyperLogLogAddHashInlines(t *testing.T) {
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to ask the compiler")
	out, err := exec.Command(goBin, "build", "-gcflags=-m", "-o", os.DevNull, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Regexp(t, regexp.MustCompile(`(?m)can inline \(\*HyperLogLog\)\.AddHash$`), string(out))
	require.Regexp(t, regexp.MustCompile(`(?m)inlining call to \(\*HyperLogLog\)\.AddHash$`), string(out),
		"Add and AddString inline it")
}
