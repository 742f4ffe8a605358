package main

import (
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/skewerhq/skewer/runtime"
)

// logFlag is -log-level: the jobs' structured logs on stderr.
type logFlag struct{ level string }

func (l *logFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&l.level, "log-level", "off", "log each job's decisions (start and end, checkpoints, restores, restarts, rescales) to stderr as text records at `LEVEL`: debug (every checkpoint), info, warn, error, or off")
}

// logger is the jobs' logger (nil: off) or a usage error naming the flag.
func (l *logFlag) logger(e *env) (*slog.Logger, error) {
	var lv slog.Level
	switch strings.ToLower(l.level) {
	case "off", "":
		return nil, nil
	case "debug":
		lv = slog.LevelDebug
	case "info":
		lv = slog.LevelInfo
	case "warn":
		lv = slog.LevelWarn
	case "error":
		lv = slog.LevelError
	default:
		return nil, fmt.Errorf("%w: -log-level = %q, want one of debug, info, warn, error, off", errUsage, l.level)
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: lv})), nil
}

// operateFlags are -ui and -log-level together: what watches a run's jobs.
type operateFlags struct {
	ui  uiFlag
	log logFlag
}

func (o *operateFlags) register(fs *flag.FlagSet) {
	o.ui.register(fs)
	o.log.register(fs)
}

// start checks -log-level and starts -ui: the hook that shows each job,
// the jobs' logger and a stop function.
func (o *operateFlags) start(e *env) (func(*runtime.Job, string), *slog.Logger, func(), error) {
	l, err := o.log.logger(e)
	if err != nil {
		return nil, nil, nil, err
	}
	show, stop, err := o.ui.start(e)
	if err != nil {
		return nil, nil, nil, err
	}
	return show, l, stop, nil
}
