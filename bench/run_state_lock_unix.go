//go:build unix

package bench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ownerLock is the file a run's state folder holds locked (flock) while
// the run lives: the kernel releases it when the process ends, however
// it ends.
const ownerLock = "owner.lock"

// lockState locks dir's owner file; the returned function unlocks it.
func lockState(dir string) (func() error, error) {
	f, err := os.OpenFile(filepath.Join(dir, ownerLock), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f.Close, nil
}

// sweepStale deletes the state folders under stateDir that a run which
// ended without deleting them (killed) left: those whose owner file no
// process holds locked. Folders without one, or held, are left alone.
func sweepStale(stateDir string) error {
	ents, err := os.ReadDir(stateDir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "state-") {
			continue
		}
		dir := filepath.Join(stateDir, e.Name())
		f, err := os.OpenFile(filepath.Join(dir, ownerLock), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			errs = append(errs, os.RemoveAll(dir))
		}
		f.Close()
	}
	return errors.Join(errs...)
}
