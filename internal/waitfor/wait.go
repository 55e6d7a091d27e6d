// Package waitfor is the wait-for graph: which goroutine is blocked in a
// syncwatch wait, on what, and who can release it.
//
// Every syncwatch primitive registers a goroutine here once it is about to
// block (past any spin) and removes it when the wait ends, so the
// uncontended paths never touch it. From the registered waits the package
// derives the graph's edges when asked (a lock's holder and readers, the
// goroutine running a Once's function, the goroutines a WaitGroup waits
// for, a barrier's missing ranks), names cycles of waits (deadlocks),
// explains a wait in words ("waiting for lock store#1, held by goroutine 12,
// which is blocked in chan receive"), and runs a monitor that reports
// deadlocks, long waits and locks held by goroutines that have exited.
//
// It is the one home of wait state: barrier, staleness, paramserver and
// lockorder all register here, so one cycle can run through a lock, a
// WaitGroup and a barrier.
package waitfor

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/mono"
)

// The kinds of waits. Kind strings appear in reports.
const (
	KindLock      = "lock"
	KindRLock     = "rlock"
	KindOnce      = "once"
	KindWaitGroup = "waitgroup"
	KindCond      = "cond"
	KindBarrier   = "barrier"
	KindClock     = "clock"
	KindWatch     = "watch"
)

// Hold is a lock the waiting goroutine holds while it waits.
type Hold struct {
	// Lock is the lock held, and Read says it is held for reading.
	Lock *class.Lock
	Read bool
	// Gen is the lock's read generation when a read hold was taken: the
	// hold is still the goroutine's while Lock.ReadGen() equals it.
	Gen uint32
}

// Valid reports whether h still describes a hold by goroutine gid.
func (h Hold) Valid(gid int64) bool {
	if h.Read {
		return h.Lock.ReadGen() == h.Gen
	}
	return h.Lock.Holder() == gid
}

// Wait is one goroutine's current wait. A Wait is filled in by the
// goroutine that registers it and not changed afterwards, except by the
// monitor's own bookkeeping, so any goroutine may read it.
type Wait struct {
	// Goroutine is the id of the goroutine that waits.
	Goroutine int64
	// Kind is what is awaited: one of the Kind constants.
	Kind string
	// Object names the barrier, clock... (for a lock, or a primitive
	// named by Named, empty: see Name), and ObjectID identifies it.
	Object   string
	ObjectID uint64
	// Named is the Once, WaitGroup or Cond waited for, whose name Name
	// formats only when a report asks: most waits end unreported.
	Named *class.Lock
	// Class names what every instance of the awaited object's kind made
	// at one place or under one name shares (a Once's or a WaitGroup's
	// class), or is empty: reports are keyed by it, one per place.
	Class string
	// Detail adds facts, e.g. "rank 3, generation 41".
	Detail string
	// Lock is the lock waited for, for lock waits.
	Lock *class.Lock
	// HolderKnown says that Lock's holder is tracked (lockorder's check
	// mode): Lock.Holder() is the writer holding it.
	HolderKnown bool
	// Holds are the locks the goroutine holds while it waits (check mode).
	Holds []Hold
	// Blockers, for waits other than on locks, appends the goroutines
	// whose action the wait needs, every one of them (a WaitGroup's
	// running goroutines, a Once's runner, a barrier's missing ranks). Nil
	// when any goroutine could end the wait (a Cond, a watch).
	Blockers func(dst []int64) []int64
	// Count, if set, returns what is left to do before the wait ends (a
	// WaitGroup's counter), or false if that is gone: each time it falls
	// to a new low the wait made progress (W3). Like Blockers, it must not
	// keep the waited-for object reachable (the table of waits is a
	// global), or the runtime could not prove its waiter leaked.
	Count func() (int64, bool)
	// Held are what the waiting goroutine's order checker holds back
	// until a release that a deadlock would never let come (lockorder's
	// edges from its holds into Lock), for the checker to take once the
	// wait is proved part of a deadlock; nil if none.
	Held any
	// Bounded marks a wait that ends by itself (a timeout or a context
	// that can be cancelled): a cycle through it is not a deadlock, it is
	// broken when the wait gives up.
	Bounded bool

	start int64 // mono reading when the wait began
	// tally are the Tallies that follow the wait until it ends
	// (Tally.Follow): each nil, a Tally, or ended once End was called. A
	// wait can be in two reports that follow their waits: a long-wait,
	// then a deadlock on evidence that is not proof (W1).
	tally [2]atomic.Pointer[Tally]
	// seen records which reports the monitor has made of this wait.
	seen atomic.Uint32
	// quiet is when the monitor last saw the lock waited for change
	// hands, or Count fall to a new low (the wait's start before that),
	// and moves the lock's Moves, or that low, then; only the monitor
	// touches them, under candMu.
	quiet int64
	moves uint64
	// ask is when the monitor next asks the runtime whether the wait is
	// blocked for good, and gap how long it waited for this ask since
	// the last; only the monitor touches them, under candMu.
	ask int64
	gap time.Duration
	// exitAt is when the monitor next looks into a holder that has
	// exited (0: once the wait has lasted Settings.ExitedAfter), and
	// exitGap its back-off; only the monitor touches them.
	exitAt  int64
	exitGap time.Duration
}

// Since returns when the wait began, on the wall clock.
func (w *Wait) Since() time.Time { return time.Now().Add(-mono.Since(w.start)) }

// Age returns how long the wait has lasted.
func (w *Wait) Age() time.Duration { return mono.Since(w.start) }

// Holder returns the goroutine holding the lock waited for, for writing,
// or 0 if unknown or not a lock wait.
func (w *Wait) Holder() int64 {
	if w.Lock == nil || !w.HolderKnown {
		return 0
	}
	return w.Lock.Holder()
}

// Name returns the name of what w waits for: Object, or the name of the
// lock or of the primitive Named.
func (w *Wait) Name() string {
	switch {
	case w.Object != "":
		return w.Object
	case w.Lock != nil:
		return w.Lock.Name()
	case w.Named != nil:
		return w.Named.Name()
	}
	return ""
}

// IsLock reports whether w waits for a lock.
func (w *Wait) IsLock() bool { return w.Kind == KindLock || w.Kind == KindRLock }

const shards = 32

// A shard holds the waits of the goroutines whose id falls in it. Waits
// are registered on contended paths, by many goroutines at once, so
// nothing on that path is shared by all of them: each shard has its own
// lock and count, on a cache line of its own.
type shard struct {
	mu sync.Mutex
	m  map[int64]*Wait
	n  atomic.Int64
	_  [40]byte
}

var table [shards]shard

func shardOf(gid int64) *shard { return &table[uint64(gid)%shards] }

// Begin registers w, the wait its goroutine is about to block in, and
// returns it. A goroutine has at most one wait: a new one replaces the
// old. Begin starts the monitor if it is not running.
func Begin(w *Wait) *Wait { return BeginAt(w, mono.Now()) }

// BeginAt is Begin for a wait that began at the mono reading start, for
// callers that have read the clock already.
func BeginAt(w *Wait, start int64) *Wait {
	w.start = start
	s := shardOf(w.Goroutine)
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[int64]*Wait)
	}
	if _, had := s.m[w.Goroutine]; !had {
		s.n.Add(1)
	}
	s.m[w.Goroutine] = w
	s.mu.Unlock()
	wake()
	return w
}

// End removes w, which must have been registered by Begin, if it is still
// its goroutine's current wait.
func End(w *Wait) {
	var d time.Duration = -1
	for i := range w.tally {
		if t := w.tally[i].Swap(&ended); t != nil && t != &ended {
			if d < 0 {
				d = mono.Since(w.start) // the clock is read for followed waits only
			}
			t.done(d)
		}
	}
	s := shardOf(w.Goroutine)
	s.mu.Lock()
	if s.m[w.Goroutine] == w {
		delete(s.m, w.Goroutine)
		s.n.Add(-1)
	}
	s.mu.Unlock()
}

// Lookup returns goroutine gid's current wait, or nil.
func Lookup(gid int64) *Wait {
	s := shardOf(gid)
	s.mu.Lock()
	w := s.m[gid]
	s.mu.Unlock()
	return w
}

// All returns every registered wait, in no particular order.
func All() []*Wait {
	out := make([]*Wait, 0, Len())
	for i := range table {
		s := &table[i]
		s.mu.Lock()
		for _, w := range s.m {
			out = append(out, w)
		}
		s.mu.Unlock()
	}
	return out
}

// Len returns the number of registered waits.
func Len() int {
	n := int64(0)
	for i := range table {
		n += table[i].n.Load()
	}
	return int(n)
}
