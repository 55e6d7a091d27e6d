package waitfor

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/goid"
)

// Stuckness returns a test, for the waits of g as d shows their
// goroutines, of whether a wait can end only by goroutines that cannot act
// now (RULES.md W7). A wait needs every goroutine of its Blockers to act,
// so it is stuck as soon as one of them cannot: one that has exited, the
// caller (it is checking, as the program ends), one blocked outside
// syncwatch (StateBlocked), or one whose own syncwatch wait is stuck; a
// cycle of waits is stuck, and a wait that ends by itself (Bounded) is
// not. A wait whose blockers are unknown (any goroutine could end it) is
// stuck only if no goroutine outside g's waits and syncwatch's own is
// awake (running, runnable, asleep; one in a system call, such as
// os/signal's, counts as blocked). The test remembers what it found, so
// one pass over g costs one walk of each chain.
func (g *Graph) Stuckness(d *Dump) func(*Wait) bool {
	self := goid.ID()
	memo := make(map[int64]bool)
	awake, looked := false, false
	anyAwake := func() bool {
		if !looked {
			awake, looked = g.othersAwake(d, self), true
		}
		return awake
	}
	var stuck func(w *Wait) bool
	stuck = func(w *Wait) bool {
		if w.Bounded {
			return false
		}
		if v, ok := memo[w.Goroutine]; ok {
			return v
		}
		memo[w.Goroutine] = true // met again on its own chain: a cycle
		v := g.blockedBy(w, d, self, stuck, anyAwake)
		memo[w.Goroutine] = v
		return v
	}
	return stuck
}

// blockedBy reports whether one of the goroutines w needs cannot act (see
// Stuckness).
func (g *Graph) blockedBy(w *Wait, d *Dump, self int64, stuck func(*Wait) bool, anyAwake func() bool) bool {
	ids := g.Blockers(w)
	if ids == nil {
		return !anyAwake()
	}
	for _, id := range ids {
		if id == self {
			return true
		}
		if next := g.waits[id]; next != nil && d.Alive(id) {
			if stuck(next) {
				return true
			}
			continue
		}
		if r, ok := d.Routine(id); !ok || StateBlocked(r.State) {
			return true // exited, or blocked outside syncwatch
		}
	}
	return false
}

// othersAwake reports whether a goroutine of d other than self, the
// waiters of g and syncwatch's own is awake: not blocked (StateBlocked)
// and not in a system call.
func (g *Graph) othersAwake(d *Dump, self int64) bool {
	awake, _ := g.awake(d, self)
	return awake
}

// awake is othersAwake, also reporting whether every goroutine it found
// awake was the runtime's, running cleanups or finalizers (cleaning).
func (g *Graph) awake(d *Dump, self int64) (awake, cleaning bool) {
	for id, state := range d.States() {
		if id == self || g.waits[id] != nil || StateBlocked(state) {
			continue
		}
		if s, _, _ := strings.Cut(state, ", "); s == "syscall" {
			continue
		}
		t := d.text(id)
		if strings.Contains(t, deliverFunc) || strings.Contains(t, trimFunc) || strings.Contains(t, fenceFunc) {
			continue // syncwatch's own: it ends, and wakes nobody
		}
		if !strings.Contains(t, "runtime.runCleanups(") && !strings.Contains(t, "runtime.runfinq(") {
			return true, false
		}
		awake = true
	}
	return awake, awake
}

// FreshForExit is Fresh for the check at exit of g's waits (W7), which
// follows a leak detection: the collection it ran queued the cleanups of
// what it freed (internal/gls trims after each one), and the runtime's
// goroutine that runs them shows in a dump while it does, even between
// two of them, with runtime.runCleanups alone on its stack. Awake, it
// would keep every wait whose blockers are unknown from being reported.
// So while the runtime's cleanup or finalizer goroutines are the only
// ones awake, it looks again once they have had time to finish, as gather
// does, but for up to exitCleanupWait: on a loaded machine the cleanup
// goroutine may wait that long for a processor, and the check at exit is
// no hurry. A cleanup that runs on (one of the program's own, which might
// end a wait) is then counted as awake.
func FreshForExit(g *Graph) *Dump { return freshForExit(g, Fresh, exitCleanupWait) }

// exitCleanupWait bounds how long FreshForExit looks again while only
// cleanups run.
const exitCleanupWait = 100 * time.Millisecond

func freshForExit(g *Graph, take func() *Dump, within time.Duration) *Dump {
	self := goid.ID()
	d := take()
	if _, cleaning := g.awake(d, self); !cleaning || !g.anyUnknown() {
		return d // nothing a cleanup awake could keep from its report
	}
	start := time.Now()
	defer func() { exitCleanupSpent.Add(int64(time.Since(start))) }()
	deadline := start.Add(min(within, time.Duration(exitCleanupBudget-exitCleanupSpent.Load())))
	for pause := time.Millisecond; time.Now().Before(deadline); pause = min(2*pause, 10*time.Millisecond) {
		time.Sleep(min(pause, time.Until(deadline)))
		if d = take(); func() bool { _, c := g.awake(d, self); return !c }() {
			break
		}
	}
	return d
}

// exitCleanupBudget bounds the time FreshForExit spends looking again in
// all, per process: a program's own cleanup that runs on must not slow
// every exit check (VerifyNone per test) by exitCleanupWait.
const exitCleanupBudget = int64(time.Second)

// exitCleanupSpent is the time FreshForExit has spent looking again.
var exitCleanupSpent atomic.Int64

// anyUnknown reports whether a wait of g that the check at exit could
// report has blockers it does not know: only such a wait can be kept
// from its report by a goroutine awake.
func (g *Graph) anyUnknown() bool {
	for _, w := range g.waits {
		if !w.Bounded && w.Kind != KindCond && w.Kind != KindWatch && g.Blockers(w) == nil {
			return true
		}
	}
	return false
}

// fenceFunc names, in a goroutine dump, the goroutine that registers the
// process for the kernel's memory barrier (internal/gls).
const fenceFunc = "internal/gls.startMembarrier."
