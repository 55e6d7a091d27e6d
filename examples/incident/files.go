package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Files are what a run writes. SVG is empty when Graphviz's dot is not on
// PATH, or failed.
type Files struct {
	Dir         string
	Spans       string // JSON lines, one span each (stdouttrace)
	DOT         string // the lock-order graph, lockorder.WriteDOT
	SVG         string // the same, drawn by dot -Tsvg
	WaitProfile string // contended lock waits, for go tool pprof
}

// newFiles names the outputs in dir, made if needed; "" makes a new
// temporary directory.
func newFiles(dir string) (Files, error) {
	var err error
	if dir == "" {
		dir, err = os.MkdirTemp("", "syncwatch-incident-")
	} else {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return Files{}, err
	}
	return Files{
		Dir:         dir,
		Spans:       filepath.Join(dir, "spans.jsonl"),
		DOT:         filepath.Join(dir, "lockgraph.dot"),
		SVG:         filepath.Join(dir, "lockgraph.svg"),
		WaitProfile: filepath.Join(dir, "waits.pb.gz"),
	}, nil
}

// newTracerProvider returns an SDK tracer provider that writes every span,
// as one JSON object per line, to path, and the function that flushes it
// and closes the file.
func newTracerProvider(path string, fixed bool) (*sdktrace.TracerProvider, func(context.Context) error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	exp, err := stdouttrace.New(stdouttrace.WithWriter(f))
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	name := "incident"
	if fixed {
		name = "incident-fixed"
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(name))),
	)
	return tp, func(ctx context.Context) error {
		return errors.Join(tp.Shutdown(ctx), f.Close())
	}, nil
}

// write writes the lock graph (and its picture, if dot is installed) and
// the wait profile.
func (f *Files) write(ctx context.Context) error {
	var dot bytes.Buffer
	if err := lockorder.WriteDOT(&dot); err != nil {
		return err
	}
	if err := os.WriteFile(f.DOT, dot.Bytes(), 0o644); err != nil {
		return err
	}
	prof, err := os.Create(f.WaitProfile)
	if err != nil {
		return err
	}
	if err := errors.Join(lockorder.WriteWaitProfile(prof), prof.Close()); err != nil {
		return err
	}
	if _, err := exec.LookPath("dot"); err != nil {
		f.SVG = ""
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "dot", "-Tsvg", "-o", f.SVG, f.DOT).CombinedOutput(); err != nil {
		f.SVG = ""
		return fmt.Errorf("dot -Tsvg: %v: %s", err, out)
	}
	return nil
}
