package barrier

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/hb"
)

// state is where a generation is in its life. It only moves forward:
// pending -> acting -> completed, or pending/acting -> broken.
type state uint8

const (
	pending   state = iota // waiting for ranks
	acting                 // every participating rank arrived; the action runs
	completed              // released with success
	broken                 // released with err
)

// generation is one round of the barrier. Its fields are guarded by
// Barrier.mu until done is closed; after that they never change, so a
// waiter released by done reads state and err without the lock.
type generation struct {
	num      uint64
	state    state
	arrivals []Arrival
	// blockers caches the goroutines of missing ranks, as of blockersAt,
	// for the wait-for graph (see missingGoroutines).
	blockers   []int64
	blockersAt time.Time
	waitingFor int  // participating ranks that have not arrived
	warned     bool // the slow-generation report was made
	err        *BrokenError
	done       chan struct{}
	op         string // the first label given (see Op), "" if none yet
	// clock is what the arriving ranks' goroutines knew (internal/hb):
	// what each did before it arrived happens before what each does
	// after the generation completes (docs/RULES.md R21).
	clock atomic.Pointer[hb.Clock]

	// Set by armLocked when the first rank starts waiting, then fixed.
	timer     *time.Timer
	deadline  time.Time
	firstRank int
	halfway   bool // the timer's first tick was handled
}

// firstArrivals is the room for arrivals of generation 0; later
// generations start with room for as many as the previous one had.
const firstArrivals = 64

// newGenerationLocked starts generation num, with room for arrivals
// arrivals: the state of a generation grows with the ranks that arrive,
// not with the barrier's parties.
func (b *Barrier) newGenerationLocked(num uint64, arrivals int) *generation {
	return &generation{
		num:        num,
		arrivals:   make([]Arrival, 0, min(arrivals, b.parties)),
		waitingFor: b.parties - len(b.left),
		done:       make(chan struct{}),
	}
}

// start returns the time of the first arrival, zero if none.
func (g *generation) start() time.Time {
	if len(g.arrivals) == 0 {
		return time.Time{}
	}
	return g.arrivals[0].At
}

// ranks returns the arrived ranks in arrival order.
func (g *generation) ranks() []int {
	out := make([]int, len(g.arrivals))
	for i, a := range g.arrivals {
		out[i] = a.Rank
	}
	return out
}

// ready reports whether g can complete: someone arrived and nobody
// participating is still awaited. A generation nobody came to never
// completes.
func (g *generation) ready() bool {
	return g.state == pending && g.waitingFor == 0 && len(g.arrivals) > 0
}

// absentLocked returns the participating ranks that did not arrive for g
// and the departed ranks that did not either, both in increasing order,
// and how many of the missing ranks never called Await.
func (b *Barrier) absentLocked(g *generation) (missing, left []int, neverArrived int) {
	return b.ranks.absent(g.num, g.waitingFor, b.left)
}

// completeLocked finishes g with success and returns the straggler lag.
func (b *Barrier) completeLocked(g *generation, now time.Time) time.Duration {
	last := g.arrivals[len(g.arrivals)-1]
	lag := last.At.Sub(g.start())
	b.hist.add(Record{
		Generation: g.num, Start: g.start(), End: now, Arrivals: g.arrivals,
		Straggler: last.Rank, Lag: lag,
	})
	b.finishLocked(g, completed, nil)
	return lag
}

// breakLocked finishes g with a *BrokenError built from its state: who
// arrived, who is missing and why. by is the rank that broke it, -1 for
// Abort and Leave.
func (b *Barrier) breakLocked(g *generation, cause error, by int, now time.Time) *BrokenError {
	missing, left, never := b.absentLocked(g)
	why := b.whyLocked(g, missing, never)
	err := &BrokenError{
		Barrier:      b.cfg.name,
		Generation:   g.num,
		Parties:      b.parties,
		Arrived:      g.ranks(),
		Missing:      missing,
		Why:          why,
		NeverArrived: never,
		Left:         left,
		Cause:        cause,
		BrokenBy:     by,
	}
	if len(g.arrivals) > 0 {
		err.Waited = now.Sub(g.start())
	}
	b.hist.add(Record{
		Generation: g.num, Start: g.start(), End: now, Arrivals: g.arrivals,
		Straggler: -1, Broken: true, Missing: missing, Cause: cause,
	})
	err.History = b.hist.snapshot()
	if len(missing) > 0 {
		b.late.add(g.num, err, len(missing))
	}
	b.finishLocked(g, broken, err)
	return err
}

// finishLocked releases g's waiters and starts the next generation, which
// the ranks that arrived for g are already on (Await moved them). Ranks
// that did not arrive stay on g: their next Await returns g's error at
// once.
func (b *Barrier) finishLocked(g *generation, st state, err *BrokenError) {
	g.state, g.err = st, err
	if g.timer != nil {
		g.timer.Stop()
	}
	b.cur = b.newGenerationLocked(g.num+1, len(g.arrivals))
	close(g.done)
}

// maxLate bounds the broken generations kept for ranks that have not yet
// arrived for them.
const maxLate = 256

// lateErrors keeps the error of each broken generation until every rank
// missing from it has arrived late and collected it.
type lateErrors struct {
	m map[uint64]*lateEntry
}

type lateEntry struct {
	err     *BrokenError
	pending int // missing ranks that have not collected err
}

func (l *lateErrors) add(gen uint64, err *BrokenError, pending int) {
	if l.m == nil {
		l.m = make(map[uint64]*lateEntry)
	}
	if len(l.m) >= maxLate {
		oldest := gen
		for g := range l.m {
			oldest = min(oldest, g)
		}
		delete(l.m, oldest)
	}
	l.m[gen] = &lateEntry{err: err, pending: pending}
}

// collect returns gen's error for rank, which is missing from it. If the
// error is no longer kept, it returns a reduced one.
func (l *lateErrors) collect(b *Barrier, gen uint64, rank int) *BrokenError {
	if e, ok := l.m[gen]; ok {
		if e.pending--; e.pending <= 0 {
			delete(l.m, gen)
		}
		return e.err
	}
	return &BrokenError{
		Barrier:    b.cfg.name,
		Generation: gen,
		Parties:    b.parties,
		Missing:    []int{rank},
		Why:        []MissingRank{{Rank: rank, HolderRank: -1, Reason: "unknown: the generation's record is no longer kept"}},
		Cause:      fmt.Errorf("generation %d broke before rank %d arrived; its record is no longer kept", gen, rank),
		BrokenBy:   -1,
	}
}

// forget drops rank's claims on the errors of generations from gen on:
// the rank left and will never collect them.
func (l *lateErrors) forget(from uint64) {
	for g, e := range l.m {
		if g >= from {
			if e.pending--; e.pending <= 0 {
				delete(l.m, g)
			}
		}
	}
}

// learnGeneration makes the calling goroutine, whose rank's wait for g
// completed, know what every rank knew when it arrived (R21).
func learnGeneration(g *generation) {
	if hb.Learn != nil {
		hb.Learn(g.clock.Load())
	}
}
