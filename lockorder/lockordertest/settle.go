package lockordertest

import (
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// blockedFloor is how long a goroutine must have been blocked in a
// syncwatch wait to be reported as blocked at exit: long enough that a
// holder waiting on a short timer, a network reply or a context is not
// taken for stuck.
const blockedFloor = time.Second

// settle waits, at most max, until no goroutine but the caller is running
// or runnable, and every syncwatch wait that could be reported as blocked
// has lasted blockedFloor (so that one still blocked then is stuck, not
// passing through). A wait that a goroutine still awake can end (a holder
// asleep under its lock, a worker in time.Sleep) cannot be reported, and
// is not waited for.
//
// A goroutine asleep (time.Sleep) or blocked outside syncwatch does not
// hold it up: with sync, os.Exit would cut it off, so the check does not
// keep the program alive for it. (Waiting for it would slow every package
// whose goroutines outlive its tests, and let a straggler's t.Log after
// its test ended panic a suite that passes with sync.)
func settle(max time.Duration) {
	self := goid.ID()
	deadline := time.Now().Add(max)
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		// The dump first: a goroutine it shows blocked in a syncwatch
		// wait registered that wait before, so g has it.
		d := waitfor.Fresh()
		g := waitfor.Snapshot()
		if quiet(d, self) && waitsOld(g, d) {
			return
		}
		if !time.Now().Before(deadline) {
			return
		}
		time.Sleep(min(pause, time.Until(deadline)))
	}
}

// reportable says whether w can be reported as blocked at exit (as in
// lockorder.ReportBlockedExcept): a wait that ends by itself, an idle
// Cond wait, a watch and a wait that a goroutine still awake can end are
// not.
func reportable(w *waitfor.Wait, stuck func(*waitfor.Wait) bool, d *waitfor.Dump) bool {
	return !w.Bounded && w.Kind != waitfor.KindCond && w.Kind != waitfor.KindWatch && d.Alive(w.Goroutine) && stuck(w)
}

// waitsOld reports whether every reportable wait has lasted blockedFloor.
func waitsOld(g *waitfor.Graph, d *waitfor.Dump) bool {
	stuck := g.Stuckness(d)
	for _, w := range g.Waits() {
		if w.Age() < blockedFloor && reportable(w, stuck, d) {
			return false
		}
	}
	return true
}

// quiet reports whether every goroutine of d but self is blocked or
// asleep: none is running or runnable. (One in a system call, such as
// os/signal's, counts as blocked.)
func quiet(d *waitfor.Dump, self int64) bool {
	for id, state := range d.States() {
		if id == self {
			continue
		}
		if i := strings.IndexByte(state, ','); i >= 0 {
			state = state[:i] // "syscall, locked to thread"
		}
		switch state {
		case "running", "runnable", "":
			return false
		}
	}
	return true
}
