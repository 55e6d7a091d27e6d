package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// watchResult is what the fixed run's watcher saw.
type watchResult struct {
	checked    bool
	contiguous bool
	next       uint64 // the version it was waiting for when it stopped
	err        error
}

// startWatch, in the fixed run, watches the parameter server from version
// 0 while the workers train, checking that every version arrives in order
// with no gap. The returned function stops the watcher once it has seen
// the final version (waiting at most a few seconds) and returns what it
// saw. In the incident run there is nothing to watch: its server keeps no
// history.
func (s *sim) startWatch(ctx context.Context) func() watchResult {
	if s.server == nil {
		return func() watchResult { return watchResult{} }
	}
	ctx, cancel := context.WithCancel(ctx)
	var next atomic.Uint64
	done := make(chan watchResult, 1)
	go func() {
		r := watchResult{checked: true, contiguous: true}
		for snap, err := range s.server.Watch(ctx, 0) {
			if err != nil {
				if ctx.Err() == nil {
					r.err = err
				}
				break
			}
			if snap.Version != next.Load() {
				r.contiguous = false
				r.err = fmt.Errorf("watch: got version %d, want %d", snap.Version, next.Load())
				break
			}
			next.Add(1)
		}
		r.next = next.Load()
		done <- r
	}()
	return func() watchResult {
		defer cancel()
		final := s.server.Version()
		deadline := time.Now().Add(5 * time.Second)
		for next.Load() <= final && time.Now().Before(deadline) {
			select {
			case r := <-done: // stopped early
				r.contiguous = false
				return r
			case <-time.After(time.Millisecond):
			}
		}
		cancel()
		r := <-done
		r.contiguous = r.contiguous && r.err == nil && r.next == final+1
		return r
	}
}
