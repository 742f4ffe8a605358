package main

import (
	"flag"
	"fmt"
	"log/slog"
	"strings"
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
