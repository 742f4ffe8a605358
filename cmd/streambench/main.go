// Command streambench measures skewer's partitioners and sketches under
// skew. With no arguments it runs the embedded default: a Zipf(1.5) stream
// over 10^6 keys through the runtime with 8 workers and a modelled service
// time, once per partitioner. See docs/streambench.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/skewerhq/skewer/bench"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // the run failed (an unreadable file, a runtime error)
	exitUsage = 2 // a bad flag or value
)

// command is one subcommand. Subcommands register themselves in init (the
// kafka subcommand lives in its own file).
type command struct {
	name    string
	summary string
	run     func(e *env, args []string) int
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// env is where a command writes: results on stdout, everything else on
// stderr.
type env struct {
	stdout, stderr io.Writer
}

// run is the whole program: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		return commands["run"].run(e, nil)
	}
	switch a := args[0]; {
	case a == "-h" || a == "-help" || a == "--help" || a == "help":
		usage(stderr)
		return exitOK
	case strings.HasPrefix(a, "-"):
		// Flags without a subcommand tune the default run.
		return commands["run"].run(e, args)
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "streambench: unknown subcommand %q, want one of %s\n", args[0], strings.Join(names(), ", "))
		usage(stderr)
		return exitUsage
	}
	return c.run(e, args[1:])
}

func names() []string {
	var ns []string
	for n := range commands {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: streambench [subcommand] [flags]

With no subcommand, streambench runs the embedded default: a Zipf(1.5)
stream over 10^6 keys through the runtime with 8 workers and a modelled
per-record service time, once per partitioner, and prints one table.

subcommands:
`)
	for _, n := range names() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, "\nRun 'streambench SUBCOMMAND -h' for its flags. Results go to stdout; errors\nand the progress line to stderr.\n")
}

// newFlagSet returns a flag set whose errors and -h go to stderr.
func newFlagSet(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: streambench %s [flags]\n\n%s\n\nflags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags; it returns the exit status to stop with, if any.
func parse(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, true
		}
		return exitUsage, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "streambench %s: unexpected argument %q (flags only)\n", fs.Name(), fs.Arg(0))
		return exitUsage, true
	}
	return 0, false
}

// fail reports err and returns its exit status: usage for a bad value.
func fail(e *env, cmd string, err error) int {
	fmt.Fprintf(e.stderr, "streambench %s: %v\n", cmd, err)
	if errors.Is(err, bench.ErrInvalidParameter) {
		return exitUsage
	}
	return exitError
}

// choice is a flag value restricted to a set of names.
type choice struct {
	value   string
	choices []string
}

func (c *choice) String() string { return c.value }

func (c *choice) Set(s string) error {
	if !slices.Contains(c.choices, s) {
		return fmt.Errorf("want one of %s", strings.Join(c.choices, ", "))
	}
	c.value = s
	return nil
}

// output holds the flags every subcommand shares.
type output struct {
	format choice
	plot   string
	quiet  bool
	seed   uint64
}

func (o *output) register(fs *flag.FlagSet, plot bool) {
	o.format = choice{value: "table", choices: bench.Formats}
	fs.Var(&o.format, "output", "output `FORMAT`: "+strings.Join(bench.Formats, ", ")+" (benchfmt: Go benchmark lines for benchstat)")
	if plot {
		fs.StringVar(&o.plot, "plot", "", "also draw the results to `FILE` (.svg or .png)")
	}
	fs.BoolVar(&o.quiet, "quiet", false, "no progress line on stderr (it is shown only when stderr is a terminal)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the workload and the partitioners (echoed in the output)")
}

// progress returns the progress reporter (nil when off) and its cleanup.
func (o *output) progress(e *env) (func(string), func()) {
	if o.quiet || !bench.IsTerminal(e.stderr) {
		return nil, func() {}
	}
	return bench.ProgressLine(e.stderr, 900*time.Millisecond)
}

func (o *output) checkPlot() error {
	if o.plot == "" {
		return nil
	}
	return bench.CheckPlotFile(o.plot)
}
