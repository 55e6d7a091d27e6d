//go:build ignore

// gen copies syncimpl/workloads.go into every other implementation's
// package. Run it with go generate in bench/internal/impls.
package main

import (
	"log"
	"os"
	"path/filepath"

	"github.com/syncwatch/syncwatch/bench/internal/impls"
)

func main() {
	src, err := os.ReadFile(impls.Source)
	if err != nil {
		log.Fatal(err)
	}
	for _, pkg := range impls.Copies {
		out := filepath.Join(pkg, "workloads.go")
		if err := os.WriteFile(out, impls.Derive(src, pkg), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
