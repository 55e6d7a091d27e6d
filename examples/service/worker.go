package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/watchdog"
)

// ledgerSize bounds the ledger's entries: the oldest are dropped.
const ledgerSize = 100

// errQueueFull is returned when the worker has too much queued.
var errQueueFull = errors.New("recount queue full")

// Worker is the service's background loop, the kind a service lives by:
// it recounts the items queued by POST /recount/{item}, one at a time,
// and writes each count to the ledger. A watchdog.Loop watches it: with a
// recount queued and no step for longer than its bound, it is stalled,
// and /healthz says so and says on what it is blocked.
type Worker struct {
	inv    *Inventory
	ledger *lockorder.Mutex // class "ledger"; guards entries
	// entries is the ledger: the latest recounts.
	entries []string
	jobs    chan string
	loop    *watchdog.Loop
	cancel  context.CancelFunc
	done    chan struct{}
}

// StartWorker starts the worker loop, watched with the given bound.
func StartWorker(inv *Inventory, bound time.Duration) *Worker {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Worker{
		inv:    inv,
		ledger: lockorder.NewMutex("ledger"),
		jobs:   make(chan string, 64),
		loop:   watchdog.New("worker", watchdog.WithBound(bound)),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go w.run(ctx)
	return w
}

// Enqueue queues a recount of item.
func (w *Worker) Enqueue(item string) error {
	w.loop.Begin()
	select {
	case w.jobs <- item:
		return nil
	default:
		w.loop.End()
		return errQueueFull
	}
}

// run is the loop: a Step per iteration, before it waits for work, so
// that an empty queue is idle, not stalled.
func (w *Worker) run(ctx context.Context) {
	defer close(w.done)
	for {
		w.loop.Step()
		select {
		case item := <-w.jobs:
			w.recount(ctx, item)
			w.loop.End()
		case <-ctx.Done():
			return
		}
	}
}

// recount reads item's stock and writes it to the ledger.
func (w *Worker) recount(ctx context.Context, item string) {
	n, err := w.inv.Stock(ctx, item)
	entry := fmt.Sprintf("%s %s: %d", time.Now().Format(time.TimeOnly), item, n)
	if err != nil {
		entry = fmt.Sprintf("%s %s: %v", time.Now().Format(time.TimeOnly), item, err)
	}
	w.ledger.Lock()
	w.entries = append(w.entries, entry)
	if len(w.entries) > ledgerSize {
		w.entries = w.entries[len(w.entries)-ledgerSize:]
	}
	w.ledger.Unlock()
}

// Ledger returns the latest entries of the ledger. It waits for the
// ledger's lock at most until ctx is done.
func (w *Worker) Ledger(ctx context.Context) ([]string, error) {
	if err := w.ledger.LockContext(ctx); err != nil {
		return nil, err
	}
	defer w.ledger.Unlock()
	return append([]string(nil), w.entries...), nil
}

// Close stops the loop, once it is not blocked, and its watching.
func (w *Worker) Close() {
	w.cancel()
	<-w.done
	w.loop.Close()
}
