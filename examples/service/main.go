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
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/syncwatch/syncwatch/lockorder"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	serve := flag.Bool("serve", false, "keep serving until interrupted, instead of running the demo requests")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, *addr, *serve); err != nil {
		fmt.Fprintln(os.Stderr, "service:", err)
		os.Exit(1)
	}
}

// run starts the service on addr and, unless serve is set, makes the
// demo's requests to it: one slow restock and three reads that wait
// behind it. It flushes the spans before it returns.
func run(ctx context.Context, w io.Writer, addr string, serve bool) (err error) {
	tp, exporter, err := newTracerProvider(ctx, w)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		err = errors.Join(err, tp.Shutdown(sctx))
	}()
	// Trace mode is the default outside tests; it is set here so that the
	// demo behaves the same under SYNCWATCH_MODE=check.
	lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace), lockorder.WithTracerProvider(tp))
	defer lockorder.Configure(lockorder.WithTracerProvider(otel.GetTracerProvider()))

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	inv := NewInventory()
	srv := &http.Server{Handler: NewHandler(inv, tp), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(w, "serving on %s, spans to %s\n", base, exporter)

	if serve {
		<-ctx.Done()
	} else {
		err = demo(ctx, w, base, inv)
	}
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
