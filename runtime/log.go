package runtime

import (
	"log/slog"
)

// Logger makes the job log what it decides and suffers to l, as
// structured records (log/slog): the run's start and end, checkpoints
// completed (id, bytes, duration, end of input) at Debug, the checkpoint a
// run restores or resumes from and the newer ones it skipped as damaged,
// failed attempts and restarts, and live rescales (each owner table
// published). Without it (or with nil) nothing is logged. Records carry
// the attributes named in the package comment's Logs; the caller's
// handler decides their format and level.
func Logger(l *slog.Logger) JobOpt { return jobOpt(func(c *jobConfig) { c.logger = l }) }

// discard is the logger of a job given none.
var discard = slog.New(slog.DiscardHandler)

// log is the job's logger: the caller's, or one that discards.
func (j *Job) log() *slog.Logger {
	if j.cfg.logger != nil {
		return j.cfg.logger
	}
	return discard
}
