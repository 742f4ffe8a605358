package datasets

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// DataDirEnv names an environment variable that, when set, overrides where
// DataDir finds the real data sets.
const DataDirEnv = "SKEWER_DATASETS"

// modulePath is the path of the module whose root holds the data/ folder.
const modulePath = "github.com/skewerhq/skewer"

var (
	// ErrNoData reports that the real data sets, or one of them, could not
	// be found; the message says where DataDir or DataFile looked.
	ErrNoData = errors.New("datasets: data not found")
	// ErrNotShipped reports that the module root is in the Go module cache
	// (a user's `go test all`), whose copy leaves data/ out by design. Errors
	// that wrap it also wrap ErrNoData. Tests skip on it, and fail on any
	// other ErrNoData.
	ErrNotShipped = errors.New("datasets: data/ is not part of the module zip")
)

// DataDir returns the folder holding the real data sets: $SKEWER_DATASETS
// if set, otherwise data/ in the root of module github.com/skewerhq/skewer,
// found by walking up from the working directory to the go.mod that
// declares it (nested modules, such as bench/peers and data/ itself, are
// passed by). The error wraps ErrNoData and says where it looked
// (ErrNotShipped as well when the module root is in the module cache).
func DataDir() (string, error) {
	if d := os.Getenv(DataDirEnv); d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return "", fmt.Errorf("%w: $%s = %q is not a folder", ErrNoData, DataDirEnv, d)
		}
		return d, nil
	}
	return repoDataDir()
}

// DataFile returns the path of the data set named name ("retail.dat") in
// DataDir: the compressed name.gz if present, else a plain file name. The
// error wraps ErrNoData and names the file and the folder.
func DataFile(name string) (string, error) {
	if name == "" || filepath.Base(name) != name {
		return "", invalidParam("name", fmt.Sprintf("%q", name), "a file name in the data folder, such as \"retail.dat\"")
	}
	dir, err := DataDir()
	if err != nil {
		return "", err
	}
	for _, p := range []string{filepath.Join(dir, name+".gz"), filepath.Join(dir, name)} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: neither %s.gz nor %s is in %s", ErrNoData, name, name, dir)
}

// repoDataDir returns data/ in the root of module modulePath above the
// working directory.
func repoDataDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoData, err)
	}
	for dir := wd; ; {
		if declaresModule(filepath.Join(dir, "go.mod"), modulePath) {
			d := filepath.Join(dir, "data")
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				return d, nil
			}
			if inModuleCache(dir) {
				return "", fmt.Errorf("%w: %w: %s is in the module cache, which holds no data/ (clone the repository to run these tests)", ErrNoData, ErrNotShipped, dir)
			}
			return "", fmt.Errorf("%w: no folder %s in the root of module %s (or set $%s)", ErrNoData, d, modulePath, DataDirEnv)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: no go.mod declaring module %s above %s (or set $%s)", ErrNoData, modulePath, wd, DataDirEnv)
		}
		dir = parent
	}
}

// declaresModule reports whether the go.mod at path declares module mod.
func declaresModule(path, mod string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			if i := strings.Index(rest, "//"); i >= 0 {
				rest = rest[:i]
			}
			return strings.Trim(strings.TrimSpace(rest), `"`) == mod
		}
	}
	return false
}

// inModuleCache reports whether dir lies in the Go module cache
// (`go env GOMODCACHE`); false when the go command cannot say.
func inModuleCache(dir string) bool {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	cache := strings.TrimSpace(string(out))
	if err != nil || cache == "" {
		return false
	}
	rel, err := filepath.Rel(resolve(cache), resolve(dir))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolve returns p with symbolic links evaluated, or p when that fails.
func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
