package bench

import (
	"errors"
	"fmt"
	"os"

	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/pebblestate"
)

// StateBackends are the keyed-state backends of RunConfig.StateBackend:
// heap (the default) or pebble (runtime/pebblestate, under StateDir).
var StateBackends = []string{"heap", "pebble"}

// validateState checks the state-backend settings: pebble needs a
// -state-dir and a windowed count (-window, or the replayable run) to keep
// state in; heap takes no -state-dir.
func (c *RunConfig) validateState() error {
	switch c.StateBackend {
	case "", "heap":
		if c.StateDir != "" {
			return invalidParam("-state-dir", c.StateDir, `"" with -state-backend heap`)
		}
	case "pebble":
		if c.StateDir == "" {
			return invalidParam("-state-dir", `""`, "a directory with -state-backend pebble")
		}
		if c.Window <= 0 && !c.replayable() {
			return invalidParam("-state-backend", c.StateBackend, "heap without -window or the replayable run (a per-record count keeps no keyed state)")
		}
	default:
		return invalidChoice("-state-backend", c.StateBackend, StateBackends)
	}
	return nil
}

// openState returns the aggregation option of one run's state backend
// (none for the heap) and the function that releases it: for pebble, a
// pebblestate.Backend in a new folder of StateDir, which release closes
// and deletes. The folder is locked while the run lives; a folder a
// killed run left (its lock free) is deleted first.
func (c *RunConfig) openState(kind string, sources, workers int) (opts []runtime.AggOpt, release func() error, err error) {
	if c.StateBackend != "pebble" {
		return nil, func() error { return nil }, nil
	}
	if err := os.MkdirAll(c.StateDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("bench: -state-dir: %w", err)
	}
	if err := sweepStale(c.StateDir); err != nil {
		return nil, nil, fmt.Errorf("bench: -state-dir: a killed run's folder: %w", err)
	}
	dir, err := os.MkdirTemp(c.StateDir, fmt.Sprintf("state-%s-s%d-w%d-", kind, sources, workers))
	if err != nil {
		return nil, nil, fmt.Errorf("bench: -state-dir: %w", err)
	}
	unlock, err := lockState(dir)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("bench: -state-dir: %w", err), os.RemoveAll(dir))
	}
	b, err := pebblestate.Open(dir)
	if err != nil {
		return nil, nil, errors.Join(err, os.RemoveAll(dir), unlock())
	}
	return []runtime.AggOpt{runtime.KeyedStateBackend(b)}, func() error { return errors.Join(b.Close(), os.RemoveAll(dir), unlock()) }, nil
}
