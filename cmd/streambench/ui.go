package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/skewerhq/skewer/observe"
	"github.com/skewerhq/skewer/runtime"
)

// uiFlag is -ui: where the live view of the running job is served.
type uiFlag struct{ addr string }

func (u *uiFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&u.addr, "ui", "", "serve a live view of the running job (per-worker load bars, imbalance, watermarks, checkpoints) and its Prometheus /metrics at `ADDR` (host:port; a bare :port is loopback's, 0.0.0.0:port every interface's; port 0 picks one); the URL goes to stderr")
}

// start serves the view when -ui is set: it returns the hook that shows
// each job as it starts (nil without -ui) and a stop function.
func (u *uiFlag) start(e *env) (func(*runtime.Job, string), func(), error) {
	if u.addr == "" {
		return nil, func() {}, nil
	}
	host, port, err := net.SplitHostPort(u.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: -ui = %q, want host:port (%v)", errUsage, u.addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, nil, fmt.Errorf("-ui: %w", err)
	}
	var cur observe.Current
	reg := prometheus.NewRegistry()
	c, err := cur.Collector()
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	reg.MustRegister(c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	srv := &http.Server{Handler: cur.Handler(reg), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(e.stderr, "streambench: live view at http://%s/ (metrics at /metrics)\n", ln.Addr())
	if e.uiReady != nil {
		e.uiReady("http://" + ln.Addr().String() + "/")
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(e.stderr, "streambench: -ui: %v\n", err)
		}
	}
	return cur.Set, stop, nil
}
