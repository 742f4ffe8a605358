// Command streambench measures skewer's partitioners and sketches under
// skew. With no arguments it runs the embedded default: a Zipf(1.5) stream
// over 10^6 keys through the runtime with 8 workers and a modelled service
// time, once per partitioner. See docs/streambench.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/skewerhq/skewer/bench"
	"github.com/skewerhq/skewer/kafka"
)

func main() {
	ctx, stop := signalContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // the run failed (an unreadable file, a runtime error)
	exitUsage = 2 // a bad flag or value
	// exitMemory: the run would hold more memory than the process may
	// use (bench.ErrMemoryBound), refused before it starts.
	exitMemory = 3
	// An interrupted run exits with 128 + the signal's number, as a shell
	// reports a process the signal ended: 130 after SIGINT, 143 after
	// SIGTERM.
	exitInterrupt = 128 + int(syscall.SIGINT)
)

// interrupt is the cause of a context cancelled by a signal.
type interrupt struct{ sig os.Signal }

func (i interrupt) Error() string { return "interrupted by " + i.sig.String() }

// signalContext returns a context cancelled at the first SIGINT or SIGTERM,
// with an interrupt naming the signal as its cause. The first signal also
// restores the default handling, so that a second one ends the process at
// once should the first not be enough.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(interrupt{s})
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		signal.Stop(ch)
		cancel(nil)
	}
}

// interruptStatus is the exit status of a run whose context ended: 128 +
// the signal's number when a signal ended it, 130 otherwise.
func interruptStatus(ctx context.Context) int {
	var i interrupt
	if errors.As(context.Cause(ctx), &i) {
		if s, ok := i.sig.(syscall.Signal); ok {
			return 128 + int(s)
		}
	}
	return exitInterrupt
}

// command is one subcommand. Subcommands register themselves in init.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) int
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// env is where a command writes: results on stdout, everything else on
// stderr.
type env struct {
	stdout, stderr io.Writer
	// progress, when set, hears the progress lines whatever stderr is
	// (tests use it to act while a run is under way).
	progress func(string)
	// uiReady, when set, hears the live view's URL once it serves (-ui).
	uiReady func(url string)
}

// run is the whole program: it returns the exit status. Cancelling ctx
// interrupts a running subcommand: it prints what it measured so far and
// returns interruptStatus.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return (&env{stdout: stdout, stderr: stderr}).run(ctx, args)
}

func (e *env) run(ctx context.Context, args []string) int {
	stderr := e.stderr
	if len(args) == 0 {
		return commands["run"].run(ctx, e, nil)
	}
	switch a := args[0]; {
	case a == "-h" || a == "-help" || a == "--help" || a == "help":
		usage(stderr)
		return exitOK
	case strings.HasPrefix(a, "-"):
		// Flags without a subcommand tune the default run.
		return commands["run"].run(ctx, e, args)
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "streambench: unknown subcommand %q, want one of %s\n", args[0], strings.Join(names(), ", "))
		usage(stderr)
		return exitUsage
	}
	return c.run(ctx, e, args[1:])
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
	fmt.Fprint(w, `
Run 'streambench SUBCOMMAND -h' for its flags. Results go to stdout; errors
and the progress line to stderr. Exit status: 0 done, 1 the run failed, 2 a
bad flag or value, 3 the run would hold more memory than the process may
use (GOMEMLIMIT, ulimit -v, the cgroup's limit or the machine's memory;
refused before it starts), 130 interrupted (SIGINT; 143 after SIGTERM)
after printing the rows measured so far.
`)
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

// errUsage reports a flag given where it has no effect: it is refused, not
// ignored.
var errUsage = errors.New("usage")

// unused returns an error refusing the flag named (as -h shows it).
func unused(flag, why string) error {
	return fmt.Errorf("%w: %s is not used %s", errUsage, flag, why)
}

// fail reports err and returns its exit status: usage for a bad value.
func fail(e *env, cmd string, err error) int {
	fmt.Fprintf(e.stderr, "streambench %s: %v\n", cmd, strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
	if errors.Is(err, bench.ErrInvalidParameter) || errors.Is(err, kafka.ErrInvalidParameter) || errors.Is(err, errUsage) {
		return exitUsage
	}
	if errors.Is(err, bench.ErrMemoryBound) {
		return exitMemory
	}
	return exitError
}

// interrupted reports an interrupted run, whose rows so far are printed,
// and returns its exit status.
func interrupted(ctx context.Context, e *env, cmd string, rows int) int {
	fmt.Fprintf(e.stderr, "streambench %s: %v: printed the %d rows measured so far\n", cmd, context.Cause(ctx), rows)
	return interruptStatus(ctx)
}

// explicit is the set of flags given on the command line.
func explicit(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// intList writes counts as the flags take them: "1,2,4".
func intList(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
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

// output holds the output flags every subcommand shares.
type output struct {
	format choice
	plot   string
	quiet  bool
}

// register registers the output flags; extra are formats of one
// subcommand alone, each a name and what it writes.
func (o *output) register(fs *flag.FlagSet, plot bool, extra ...[2]string) {
	o.format = choice{value: "table", choices: slices.Clone(bench.Formats)}
	what := "benchfmt: Go benchmark lines for benchstat"
	for _, x := range extra {
		o.format.choices = append(o.format.choices, x[0])
		what += "; " + x[0] + ": " + x[1]
	}
	fs.Var(&o.format, "output", "output `FORMAT`: "+strings.Join(o.format.choices, ", ")+" ("+what+")")
	if plot {
		fs.StringVar(&o.plot, "plot", "", "also draw the results to `FILE` (.svg or .png; checked writable before the run)")
	}
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr (a live line on a terminal; elsewhere, a line every 10s of a longer run)")
}

// progress returns the progress reporter (nil when off) and its cleanup.
func (o *output) progress(e *env) (func(string), func()) {
	if e.progress != nil {
		return e.progress, func() {}
	}
	switch {
	case o.quiet:
		return nil, func() {}
	case !bench.IsTerminal(e.stderr):
		// A log, not a terminal: a line every 10 s, none in a shorter run.
		return bench.ProgressLog(e.stderr, "streambench:", 10*time.Second)
	}
	return bench.ProgressLine(e.stderr, 900*time.Millisecond)
}

// checkPlot checks the -plot file before the run: a bad name or an
// unwritable path fails at once, not after the sweep.
func (o *output) checkPlot() error {
	if o.plot == "" {
		return nil
	}
	return bench.CheckPlotFile(o.plot)
}

// write writes the rows (and, with -plot, their panels when there are any);
// an interrupted run is marked in the settings.
func (o *output) write(ctx context.Context, e *env, meta bench.Meta, rows []bench.Row, panels func() []bench.Panel) error {
	if ctx.Err() != nil {
		meta.Settings = append(meta.Settings, [2]string{"interrupted", "true"})
	}
	return o.writeWith(e, func(w io.Writer) error { return bench.Write(w, o.format.value, meta, rows) }, len(rows), panels)
}

// writeWith writes n rows with write, a format of one subcommand alone
// (and, with -plot, their panels when there are any).
func (o *output) writeWith(e *env, write func(io.Writer) error, n int, panels func() []bench.Panel) error {
	if err := write(e.stdout); err != nil {
		return err
	}
	if o.plot != "" && n > 0 {
		return bench.SavePlot(o.plot, panels())
	}
	return nil
}
