package errgroupapp

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
)

type Index struct {
	mu     sync.Mutex // guards docs
	statMu sync.Mutex // guards stats
	docs   map[int]string
	stats  map[string]int
}

// Build indexes in parallel: each task records a doc, then counts it.
func (ix *Index) Build(ctx context.Context, n int) error {
	g, _ := errgroup.WithContext(ctx)
	for i := 0; i < n; i++ {
		g.Go(func() error {
			ix.mu.Lock()
			ix.docs[i] = "doc"
			ix.statMu.Lock()
			ix.stats["docs"]++
			ix.statMu.Unlock()
			ix.mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// All tasks are done: report under statMu, reading docs.
	ix.statMu.Lock()
	defer ix.statMu.Unlock()
	ix.mu.Lock()
	ix.stats["total"] = len(ix.docs)
	ix.mu.Unlock()
	return nil
}
