package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Bugs are the service's faults on purpose, for trying the health check
// and the live view:
//
//	/bug/stall?for=DURATION   a ledger export that never returns holds the
//	                          ledger lock (for 5m by default) and a recount
//	                          is queued: the worker loop stalls with work
//	                          pending, and /healthz answers 503 once its
//	                          bound has passed
//	/bug/abba                 two requests take worker_lock and
//	                          aggregation_lock in opposite orders, and
//	                          deadlock (the bug of incident 003)
//
// Both end when the service shuts down: the export gives up, and the
// deadlock is broken by unlocking one lock on its holder's behalf (legal
// for a Mutex), so that the program exits cleanly.
type Bugs struct {
	worker *Worker
	base   string // the service's URL, for the two requests of abba
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// worker_lock and aggregation_lock, taken by the two requests.
	workerLock, aggLock *lockorder.Mutex

	mu        sync.Mutex
	exporting bool // a stuck export holds the ledger
	abba      bool // the two requests were sent
	holding   chan struct{}
	held1     bool // request 1 holds worker_lock
	rescued   bool // worker_lock was unlocked on request 1's behalf
}

// NewBugs returns the bugs of a service whose worker is worker and whose
// URL is base.
func NewBugs(worker *Worker, base string) *Bugs {
	ctx, cancel := context.WithCancel(context.Background())
	return &Bugs{
		worker:     worker,
		base:       base,
		ctx:        ctx,
		cancel:     cancel,
		workerLock: lockorder.NewMutex("worker_lock"),
		aggLock:    lockorder.NewMutex("aggregation_lock"),
		holding:    make(chan struct{}, 2),
	}
}

// register adds the bugs' endpoints to mux.
func (b *Bugs) register(mux *http.ServeMux) {
	mux.HandleFunc("/bug/stall", b.stall)
	mux.HandleFunc("/bug/abba", b.startABBA)
	mux.HandleFunc("POST /bug/abba/aggregate", b.aggregate)
	mux.HandleFunc("POST /bug/abba/report", b.report)
}

// stall makes the worker loop stall with work pending.
func (b *Bugs) stall(w http.ResponseWriter, r *http.Request) {
	d := 5 * time.Minute
	if s := r.URL.Query().Get("for"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil || d <= 0 {
			http.Error(w, "for: want a positive duration", http.StatusBadRequest)
			return
		}
	}
	b.mu.Lock()
	if b.exporting {
		b.mu.Unlock()
		http.Error(w, "already stalling", http.StatusConflict)
		return
	}
	b.exporting = true
	b.mu.Unlock()
	held := make(chan struct{})
	b.wg.Go(func() { b.exportLedger(held, d) })
	<-held
	if err := b.worker.Enqueue("widgets"); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	fmt.Fprintf(w, "A ledger export holds the ledger lock, stuck for %v, and a recount is queued: the worker loop stalls "+
		"with work pending. After its bound (%v) /healthz answers 503 naming it and what it is blocked on; see also /debug/syncwatch.\n",
		d, b.worker.loop.Bound())
}

// exportLedger is the stuck export: it holds the ledger lock while it
// waits for a downstream that does not answer (for d, or until the
// service shuts down).
func (b *Bugs) exportLedger(held chan<- struct{}, d time.Duration) {
	ctx, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	b.worker.ledger.Lock()
	close(held)
	<-ctx.Done() // the downstream never answers
	b.worker.ledger.Unlock()
	b.mu.Lock()
	b.exporting = false
	b.mu.Unlock()
}

// startABBA sends the two requests that deadlock, and answers once both
// hold their first lock.
func (b *Bugs) startABBA(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	if b.abba {
		b.mu.Unlock()
		http.Error(w, "already deadlocked", http.StatusConflict)
		return
	}
	b.abba = true
	b.mu.Unlock()
	for _, path := range []string{"/bug/abba/aggregate", "/bug/abba/report"} {
		b.wg.Go(func() {
			req, err := http.NewRequestWithContext(b.ctx, "POST", b.base+path, nil)
			if err != nil {
				return
			}
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	timeout := time.After(5 * time.Second)
	for range 2 {
		select {
		case <-b.holding:
		case <-timeout:
			http.Error(w, "the two requests did not start", http.StatusInternalServerError)
			return
		}
	}
	w.WriteHeader(http.StatusAccepted)
	fmt.Fprintf(w, "Two requests, POST /bug/abba/aggregate and POST /bug/abba/report, each hold one of worker_lock and "+
		"aggregation_lock and wait for the other. In check mode the deadlock is reported within seconds and "+
		"/debug/syncwatch shows the cycle; /healthz answers 503.\n")
}

// pause lets both requests take their first lock before either takes its
// second.
const pause = 50 * time.Millisecond

// aggregate is request 1: worker_lock, then aggregation_lock.
func (b *Bugs) aggregate(w http.ResponseWriter, r *http.Request) {
	b.workerLock.Lock()
	b.mu.Lock()
	b.held1 = true
	b.mu.Unlock()
	b.holding <- struct{}{}
	time.Sleep(pause)
	b.aggLock.Lock()
	b.aggLock.Unlock()
	b.mu.Lock()
	if !b.rescued { // else Release unlocked it for us
		b.workerLock.Unlock()
	}
	b.held1 = false
	b.mu.Unlock()
}

// report is request 2: aggregation_lock, then worker_lock.
func (b *Bugs) report(w http.ResponseWriter, r *http.Request) {
	b.aggLock.Lock()
	b.holding <- struct{}{}
	time.Sleep(pause)
	b.workerLock.Lock()
	b.workerLock.Unlock()
	b.aggLock.Unlock()
}

// Release ends the bugs: the export gives up, the deadlock is broken, and
// every goroutine they started returns.
func (b *Bugs) Release() {
	b.cancel()
	b.mu.Lock()
	if b.held1 && !b.rescued {
		// Request 1 holds worker_lock and waits for aggregation_lock:
		// unlocking worker_lock for it lets request 2 finish, which
		// frees aggregation_lock for request 1.
		b.rescued = true
		b.workerLock.Unlock()
	}
	b.mu.Unlock()
	b.wg.Wait()
}
