package runtime

import (
	"slices"
	"sync"
	"time"
)

// RescaleEvent is an owner table that a live rescale (Job.Rescale)
// published: the moment the stage's senders were told to route by it.
type RescaleEvent struct {
	At    time.Time
	Stage string
	// Generation numbers the stage's owner tables: the one it starts
	// with is 1, so a first rescale publishes 2.
	Generation uint64
	// Active is the number of workers the rescale moves the stage to, and
	// Moved the key groups whose owner this table changed (a rescale with
	// MigrationStep publishes several tables toward Active).
	Active, Moved int
}

// maxRescaleEvents is how many of the newest events Job.Rescales keeps.
const maxRescaleEvents = 1024

// rescaleLog keeps a job's newest rescale events.
type rescaleLog struct {
	mu     sync.Mutex
	events []RescaleEvent
}

func (l *rescaleLog) add(ev RescaleEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.events) == maxRescaleEvents {
		l.events = slices.Delete(l.events, 0, 1)
	}
	l.events = append(l.events, ev)
}

// Rescales returns the owner tables live rescales have published in this
// job, oldest first (the newest 1024). It is safe to call while the job
// runs.
func (j *Job) Rescales() []RescaleEvent {
	j.rescales.mu.Lock()
	defer j.rescales.mu.Unlock()
	return slices.Clone(j.rescales.events)
}
