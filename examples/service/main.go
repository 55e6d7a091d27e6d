package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncwatch/syncwatch/lockorder"
)

// settings are the command's flags.
type settings struct {
	addr  string
	serve bool
	// stallBound is the worker loop's watchdog bound, and traceDir where
	// the flight recorder writes (-serve only; empty for none).
	stallBound time.Duration
	traceDir   string
}

// defaultStallBound is the worker loop's bound unless -stall-bound says.
const defaultStallBound = 3 * time.Second

// flightWindow is how much execution trace the flight recorder keeps.
const flightWindow = 10 * time.Second

func main() {
	s := settings{}
	flag.StringVar(&s.addr, "addr", "127.0.0.1:0", "address to listen on")
	flag.BoolVar(&s.serve, "serve", false, "keep serving until interrupted, instead of running the demo requests")
	flag.DurationVar(&s.stallBound, "stall-bound", defaultStallBound, "how long the worker loop may go without a step while work is pending")
	flag.StringVar(&s.traceDir, "trace-dir", filepath.Join(os.TempDir(), "syncwatch-traces"),
		"with -serve, where execution traces of hangs are written (empty: none)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runWith(ctx, os.Stdout, s); err != nil {
		fmt.Fprintln(os.Stderr, "service:", err)
		os.Exit(1)
	}
}

// run starts the service on addr and, unless serve is set, makes the
// demo's requests to it: one slow restock and three reads that wait
// behind it. It flushes the spans before it returns.
func run(ctx context.Context, w io.Writer, addr string, serve bool) error {
	return runWith(ctx, w, settings{addr: addr, serve: serve, stallBound: defaultStallBound})
}

// runWith is run with every setting.
func runWith(ctx context.Context, w io.Writer, s settings) (err error) {
	tp, exporter, err := newTracerProvider(ctx, w)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		err = errors.Join(err, tp.Shutdown(sctx))
	}()
	mode := configure(w, s, tp)
	defer lockorder.Configure(lockorder.WithTracerProvider(otel.GetTracerProvider()), lockorder.WithFlightRecorder("", 0))

	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	inv := NewInventory()
	worker := StartWorker(inv, s.stallBound)
	bugs := NewBugs(worker, base)
	srv := &http.Server{Handler: newMux(inv, worker, bugs, tp), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(w, "serving on %s, spans to %s\n", base, exporter)

	if s.serve {
		fmt.Fprintf(w, "lockorder mode %s; the worker loop's bound is %v\n", mode, s.stallBound)
		fmt.Fprintf(w, "  live view:  %s/debug/syncwatch  (JSON: %s/debug/syncwatch?format=json)\n", base, base)
		fmt.Fprintf(w, "  health:     %s/healthz\n", base)
		fmt.Fprintf(w, "  break it:   curl %s/bug/stall   (the worker loop stalls with work pending)\n", base)
		fmt.Fprintf(w, "              curl %s/bug/abba    (two requests deadlock on two locks)\n", base)
		<-ctx.Done()
	} else {
		err = demo(ctx, w, base, inv)
	}
	bugs.Release() // before the server waits for the requests they block
	worker.Close()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil {
		return errors.Join(err, serr)
	}
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// configure sets lockorder up and returns its mode. The demo runs in
// trace mode, the mode meant for production (set here so that it behaves
// the same under SYNCWATCH_MODE=check). -serve runs in check mode unless
// SYNCWATCH_MODE says otherwise: check mode tracks who holds each lock,
// which is what lets the live view and /healthz name a deadlock; in trace
// mode they list the waits without their holders. Deadlocks are reported
// and left blocked, as sync would, and with -trace-dir the flight
// recorder writes the execution trace of each hang.
func configure(w io.Writer, s settings, tp trace.TracerProvider) lockorder.Mode {
	mode := lockorder.ModeTrace
	if s.serve {
		mode = lockorder.ModeCheck
		if env := os.Getenv("SYNCWATCH_MODE"); env != "" {
			if m, err := lockorder.ParseMode(env); err == nil {
				mode = m
			}
		}
	}
	opts := []lockorder.Option{lockorder.WithMode(mode), lockorder.WithTracerProvider(tp), lockorder.WithDeadlockAction(lockorder.DeadlockReport)}
	if s.serve && s.traceDir != "" {
		opts = append(opts, lockorder.WithFlightRecorder(s.traceDir, flightWindow))
		fmt.Fprintf(w, "execution traces of hangs go to %s\n", s.traceDir)
	}
	lockorder.Configure(opts...)
	return mode
}

// demo restocks slowly and reads the stock three times meanwhile.
func demo(ctx context.Context, w io.Writer, base string, inv *Inventory) error {
	client := &http.Client{Timeout: 5 * time.Second}
	do := func(method, path string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, method, base+path, nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return fmt.Sprintf("%s %s -> %s %s", method, path, resp.Status, strings.TrimSpace(string(body))), err
	}

	var wg sync.WaitGroup
	lines := make([]string, 4)
	errs := make([]error, 4)
	wg.Go(func() { lines[0], errs[0] = do("POST", "/restock/widgets?n=12&work=250ms") })
	// Wait, bounded, until the restock holds the lock, so that the reads
	// contend for it.
	for deadline := time.Now().Add(2 * time.Second); !inv.busy(); {
		if time.Now().After(deadline) {
			wg.Wait()
			return errors.Join(append(errs, errors.New("the restock never took the lock"))...)
		}
		time.Sleep(time.Millisecond)
	}
	for i := 1; i < 4; i++ {
		wg.Go(func() { lines[i], errs[i] = do("GET", "/stock/widgets") })
	}
	wg.Wait()
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return errors.Join(errs...)
}
