package datasets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNoSharedData reports that the project's shared data folder could not be
// found.
var ErrNoSharedData = errors.New("datasets: shared data folder not found")

// SharedDirEnv names an environment variable that, when set, overrides where
// SharedDir looks for the real data sets.
const SharedDirEnv = "SKEWER_DATASETS"

// SharedDir returns the folder holding the real data sets used by the
// project's tests and benchmarks: $SKEWER_DATASETS if set, otherwise
// ../shared/datasets beside the module root found by walking up from the
// working directory to go.mod. The error says where it looked.
func SharedDir() (string, error) {
	if d := os.Getenv(SharedDirEnv); d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return "", fmt.Errorf("%w: $%s = %q is not a folder", ErrNoSharedData, SharedDirEnv, d)
		}
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoSharedData, err)
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			// bench/peers is a nested module: keep walking up to the root one.
			if _, err := os.Stat(filepath.Join(dir, "..", "..", "go.mod")); err == nil && filepath.Base(filepath.Dir(dir)) == "bench" {
				dir = filepath.Dir(filepath.Dir(dir))
				continue
			}
			d := filepath.Join(dir, "..", "shared", "datasets")
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				return filepath.Clean(d), nil
			}
			return "", fmt.Errorf("%w: expected %s beside the project root (or set $%s)", ErrNoSharedData, filepath.Clean(d), SharedDirEnv)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: no go.mod above %s (or set $%s)", ErrNoSharedData, wd, SharedDirEnv)
		}
		dir = parent
	}
}

// SharedFile returns the path of a named file in SharedDir, or an error
// naming the file and the folder when it is absent. Tests call it and fail
// (never skip) on error, so CI notices missing data.
func SharedFile(name string) (string, error) {
	dir, err := SharedDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: %s is missing from %s", ErrNoSharedData, name, dir)
	}
	return p, nil
}
