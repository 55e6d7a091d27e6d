package waitfor

import (
	"os"
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/leak"
)

// evidence is what the monitor knows, at one moment, of which goroutines
// are blocked for good. A suspicion (a cycle of waits, a long wait) becomes
// a verdict only on evidence: any goroutine may Unlock a Mutex, so a cycle
// of lock waits could still be broken from outside it (rules W1 and W2 of docs/
// docs/RULES.md).
type evidence struct {
	// dump is the goroutines' states when the evidence was gathered.
	dump *Dump
	// leaks says the runtime's leak detection ran just before dump was
	// taken: dump marks the goroutines it proved blocked for good.
	leaks bool
	// allBlocked says every goroutine of the program but the monitor's
	// own was blocked in a wait that only another goroutine can end (a
	// channel, a select, a sync primitive), and no registered wait could
	// end by itself: nothing was left to wake anyone.
	allBlocked bool
	// busy says, when not allBlocked, that the only goroutines that could
	// act were running or waiting for a processor: a state that passes,
	// worth a look again soon rather than after a back-off.
	busy bool
}

// leaked reports whether the runtime proved goroutine gid blocked for good.
func (e *evidence) leaked(gid int64) bool { return e != nil && e.leaks && e.dump.leaked(gid) }

// gather collects evidence about the waits of g: the runtime's leak
// detection where it has one (a garbage collection cycle), then a goroutine
// dump (a stop-the-world). Callers rate-limit it.
//
// Where every goroutine is blocked and the runtime's own detection is to
// end the program (keepLooking unset: see Settings.KeepLooking), it leaves
// the leak detection out: a leaked goroutine is marked for good, and a
// program whose goroutines are all marked ends with the runtime's "no
// goroutines (main called runtime.Goexit)" instead of sync's "all
// goroutines are asleep".
func gather(g *Graph, keepLooking bool) *evidence {
	gathered.Add(1)
	e := &evidence{dump: Fresh()}
	e.allBlocked, e.busy = allBlocked(e.dump, g)
	if (e.allBlocked && !keepLooking) || !leak.Supported() {
		return e
	}
	e.leaks = leak.Detect()
	// The collection the detection ran queues the cleanups of what it
	// freed (internal/gls trims after each one), so the goroutine that
	// runs them may be busy just now: if it alone keeps the program from
	// looking all blocked, look again once it has had time to finish,
	// rather than taking the program for busy and collecting again.
	for try := 1; ; try++ {
		var cleaning bool
		e.dump = Fresh()
		e.allBlocked, e.busy, cleaning = blockedBut(e.dump, g)
		if e.allBlocked || !cleaning || try == cleanupLooks {
			return e
		}
		time.Sleep(time.Duration(try) * time.Millisecond)
	}
}

// cleanupLooks is how many dumps gather takes after a leak detection while
// only the runtime's cleanup goroutine is running.
const cleanupLooks = 4

// blockedStates are the states, as a goroutine dump's header shows them,
// of a goroutine that only another goroutine, or input from outside the
// process, can wake: no timer, system call or the scheduler ends them. A
// goroutine in any other state (running, runnable, sleep, syscall, ...)
// may still act. (A goroutine in IO wait counts as blocked: a test's
// servers, clients and output pipes wait for input from goroutines of the
// process; input from outside is the limit of rule W1.)
var blockedStates = map[string]bool{
	"IO wait":                 true,
	"chan receive":            true,
	"chan send":               true,
	"chan receive (nil chan)": true,
	"chan send (nil chan)":    true,
	"select":                  true,
	"select (no cases)":       true,
	"semacquire":              true,
	"sync.Cond.Wait":          true,
	"sync.Mutex.Lock":         true,
	"sync.RWMutex.RLock":      true,
	"sync.RWMutex.Lock":       true,
	"sync.WaitGroup.Wait":     true,
	"synctest.Run":            true,
	"synctest.Wait":           true,
	"coroutine":               true, // an iter.Pull iterator parked until resumed
}

// StateBlocked reports whether a goroutine in state (as RoutineState or a
// dump's header shows it, with or without its duration) can only be woken
// by another goroutine.
func StateBlocked(state string) bool {
	s, _, _ := strings.Cut(state, ", ") // "chan receive, 5 minutes"
	if _, ok := leak.Marked(s); ok {
		return true // the runtime proved it: nothing will wake it
	}
	s = strings.TrimSuffix(s, " (durable)") // in a synctest bubble
	return blockedStates[s]
}

// allBlocked reports whether every goroutine in d, but the caller and the
// goroutines delivering the monitor's findings, is blocked (see
// StateBlocked), and no wait of g could end by itself; if not, busy says
// that only running or runnable goroutines were not blocked.
func allBlocked(d *Dump, g *Graph) (all, busy bool) {
	all, busy, _ = blockedBut(d, g)
	return all, busy
}

// blockedBut is allBlocked, also reporting whether the only goroutines not
// blocked were running cleanups or finalizers (cleaning).
func blockedBut(d *Dump, g *Graph) (all, busy, cleaning bool) {
	for _, w := range g.waits {
		if w.Bounded {
			return false, false, false
		}
	}
	self := goid.ID()
	all, busy, cleaning = true, true, true
	for id, state := range d.States() {
		if id == self || StateBlocked(state) {
			continue
		}
		if t := d.text(id); strings.Contains(t, deliverFunc) || strings.Contains(t, trimFunc) {
			// Printing a report, or trimming goroutine states after a
			// collection (which the leak detection's own collection
			// starts): it ends, and wakes nobody.
			continue
		}
		if debugEvidence {
			println("waitfor: not all blocked:", id, state, "\n"+d.text(id))
		}
		all = false
		if s, _, _ := strings.Cut(state, ", "); s != "running" && s != "runnable" && s != "preempted" {
			busy = false
		}
		if t := d.text(id); !strings.Contains(t, "runtime.runCleanups(") && !strings.Contains(t, "runtime.runfinq(") {
			cleaning = false
		}
	}
	return all, all || busy, !all && cleaning
}

var debugEvidence = os.Getenv("SYNCWATCH_DEBUG_EVIDENCE") != ""

// deliverFunc names, in a goroutine dump, the function that delivers the
// monitor's findings.
const deliverFunc = "internal/waitfor.deliver("

// trimFunc names, in a goroutine dump, the cleanup that trims goroutine
// states after each garbage collection (internal/gls).
const trimFunc = "internal/gls.trimAfterGC." // .func1( before Go 1.27, .1( from it
