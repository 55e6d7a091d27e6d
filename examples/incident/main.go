package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

func main() {
	var cfg Config
	flag.BoolVar(&cfg.Fixed, "fixed", false, "run the corrected design instead of the incident's")
	flag.StringVar(&cfg.OutDir, "out", "", "directory for spans, lock graph and wait profile (default: a new temporary directory, kept and named at the end)")
	flag.DurationVar(&cfg.BarrierTimeout, "timeout", 1500*time.Millisecond, "barrier timeout: how long the all-reduce waits before it breaks")
	flag.DurationVar(&cfg.Deadline, "deadline", 30*time.Second, "bound on the whole run")
	flag.BoolVar(&cfg.Verbose, "v", false, "print every report in full, with stacks")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := run(ctx, cfg)
	if res.Files.Dir != "" {
		if cfg.OutDir == "" {
			fmt.Printf("\nwritten to %s (a new temporary directory, kept; -out DIR chooses one):\n", res.Files.Dir)
		} else {
			fmt.Printf("\nwritten to %s:\n", res.Files.Dir)
		}
		fmt.Printf("  spans (JSON lines)   %s\n", res.Files.Spans)
		fmt.Printf("  lock graph (DOT)     %s\n", res.Files.DOT)
		if res.Files.SVG != "" {
			fmt.Printf("  lock graph (SVG)     %s\n", res.Files.SVG)
		}
		fmt.Printf("  wait profile         %s   (go tool pprof -top %s)\n", res.Files.WaitProfile, res.Files.WaitProfile)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if !cfg.Fixed {
		fmt.Println("\nnext: go run ./examples/incident -fixed")
	}
}
