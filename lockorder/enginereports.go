//go:build !syncwatch_off

package lockorder

import (
	"fmt"
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// Building the engine's own violation reports.

// cycleViolation builds the report of c. Called with eng.mu held.
func cycleViolation(c graph.Cycle, gid int64, st stack.ID) Violation {
	v := Violation{
		Kind:      KindCycle,
		Time:      time.Now(),
		Goroutine: gid,
		Stack:     frames(st),
	}
	var names, code, key []string
	places, shown := takenAt(c)
	byCode := false // some lock is named by the code that took it
	for i, e := range c {
		from, to := eng.nodes[e.From].ref(), eng.nodes[e.To].ref()
		v.Locks = append(v.Locks, from)
		name := eng.nodes[e.From].nameIn(shown[(i+len(c)-1)%len(c)])
		byCode = byCode || name != from.Name
		names = append(names, name)
		code = append(code, eng.nodes[e.From].code()+" "+places[i])
		v.Cycle = append(v.Cycle, Edge{
			From: from.Name, To: to.Name,
			FromRead: !e.FromWrite, ToRead: !e.ToWrite,
			Goroutine: e.First.Goroutine,
			Stack:     frames(stack.ID(e.First.Stack)),
			Time:      e.First.Time,
		})
	}
	for _, id := range c.Key() {
		key = append(key, fmt.Sprint(uint64(id)))
	}
	// One report per cycle in the code: the same cycle over other locks
	// (another object's fields), reached from any test or caller, counts
	// as an instance of it. Each edge is keyed by where it took its lock
	// (takenAt) and what the lock it was taken under is in the code (see
	// nodeInfo.code). For a zero-value lock that is nothing: its name
	// says which function first locked that instance, which differs
	// between instances of one field; the place that took it, the
	// previous edge's, stands for it.
	first := minRotation(code)
	v.Key = string(KindCycle) + ":" + strings.Join(rotate(code, first), "\x00")
	v.Instances = 1
	v.instance = string(KindCycle) + ":" + strings.Join(key, ",")
	if byCode {
		// Then the message starts where the key does, so that every
		// instance of the cycle, closed by any of its edges, says the
		// same. (Named locks keep the order of Locks: their instances
		// have names of their own.)
		names = rotate(names, first)
	}
	v.Message = cycleMessage(names)
	return v
}

// nameIn returns the name of the node in the message of a cycle's
// report, where the edge into it took it at the place taken (as takenAt
// shows it, "" if unknown). A zero-value lock is named after that place,
// "store.(*DB).put (db.go:12)": its own name, the function that first
// locked that instance, differs between instances of one field, and its
// instance number between runs, while the places that took the cycle's
// locks are the cycle's key. So every instance of one cycle in the code,
// in any run, reads the same. A named class's lock, or a lock whose site
// is unknown, keeps its name.
func (n nodeInfo) nameIn(taken string) string {
	if n.cls.Named || n.label.Site == nil || taken == "" {
		return n.ref().Name
	}
	if k := n.label.Kind; !k.Lock() {
		return k.String() + " " + taken // not a lock: say what it is, as its own name does
	}
	return taken
}

// takenAt names, for each edge of c, where it took its lock: the line,
// "store.(*DB).beginTx:801". When two edges took their locks at one line
// (a helper that locks what it is given), the line does not tell the
// locks apart, and each edge is named by its line and its caller's: two
// cycles through one helper from different code are two reports. A
// caller that is a test function (or its closure) is only "a test": one
// cycle reached from two tests is one report. Else the callers are left
// out, so that one cycle reached from two callers is one report. shown
// says the same for a reader, "store.(*DB).put (db.go:12) from
// store.(*DB).Batch (db.go:40)", to name the locks in the message.
func takenAt(c graph.Cycle) (places, shown []string) {
	depth := 1
	lines := make(map[stack.Frame]bool, len(c))
	for _, e := range c {
		f := stack.Top(stack.ID(e.First.Stack))
		if lines[f] {
			depth = 2
			break
		}
		lines[f] = true
	}
	places, shown = make([]string, len(c)), make([]string, len(c))
	for i, e := range c {
		fs := stack.Frames(stack.ID(e.First.Stack))
		var b, r strings.Builder
		for k, f := range fs[:min(depth, len(fs))] {
			if k > 0 && isTest(f) {
				b.WriteString("test;")
				continue
			}
			fmt.Fprintf(&b, "%s:%d;", f.Function, f.Line)
			if k > 0 {
				r.WriteString(" from ")
			}
			fmt.Fprintf(&r, "%s (%s:%d)", shortFunc(f.Function), baseName(f.File), f.Line)
		}
		places[i], shown[i] = b.String(), r.String()
	}
	return places, shown
}

// isTest reports whether f is in a test, benchmark, example or fuzz
// function of a _test.go file, or in one of its closures.
func isTest(f stack.Frame) bool { return testName(f.Function, f.File) != "" }

// minRotation returns where s's least rotation in lexicographic order
// starts, so that a cycle's key does not depend on which of its edges
// closed it.
func minRotation(s []string) int {
	best := 0
	for i := 1; i < len(s); i++ {
		for k := range s {
			a, b := s[(i+k)%len(s)], s[(best+k)%len(s)]
			if a != b {
				if a < b {
					best = i
				}
				break
			}
		}
	}
	return best
}

// rotate returns s rotated to start at index first.
func rotate(s []string, first int) []string {
	return append(s[first:len(s):len(s)], s[:first]...)
}

// perCode keys v, a report of kind about lock l made at stack st, by what
// l is in the code and the line of st that took it: the same misuse of
// the same field in many objects, reached from any test or caller, is one
// report, counting the occurrences it was seen in. What l is in the code
// is its class's name; for a zero-value lock, nothing, as in a cycle's
// key: its site, the function that first locked that instance, differs
// between instances of one field, and the line that used it stands for
// it. A lock with neither is only itself.
func (v Violation) perCode(kind Kind, l *class.Lock, st stack.ID) Violation {
	code := fmt.Sprintf("class %d", l.Class.ID)
	if b := l.Label(); b.Class.Named {
		code = b.ClassName()
	} else if b.Site != nil {
		code = "-"
	}
	// The line that took the lock, not the whole stack: one report
	// whatever test or caller reached it, its occurrences counted.
	v.Key = fmt.Sprintf("%s:%s:%s", kind, code, stack.Top(st))
	v.instance = fmt.Sprintf("%s:%d:%d", kind, l.ID, st)
	v.Instances = 1
	return v
}

func ref(l *class.Lock) LockRef {
	b := l.Label()
	return LockRef{Name: b.Name(), Class: b.ClassName(), Func: b.Func(), ID: l.ID}
}

// reportRecursive reports that goroutine gs, at stack st, locks l, which
// it holds already (for reading if heldRead), for reading if read.
func reportRecursive(gs *held.G, l *class.Lock, heldRead, read bool, st stack.ID) {
	kind := KindRecursiveLock
	if heldRead && read {
		kind = KindRecursiveRLock
	}
	publish(Violation{
		Kind:      kind,
		Message:   recursiveMessage(gs.ID(), l.Name(), heldRead, read),
		Time:      time.Now(),
		Goroutine: gs.ID(),
		Stack:     frames(st),
		Locks:     []LockRef{ref(l)},
	}.perCode(kind, l, st))
}

// holdBackRecursiveRead holds back the report that gs, at stack st,
// read-locks l, which it read-holds already: it is made once gs has itself
// released the hold it had then and the new one (one release, if the new
// hold is never taken: RLockContext gave up behind a writer); see
// held.Pending. The acquisition counts the new hold (held.proofs.TookRead)
// once it has it.
func holdBackRecursiveRead(gs *held.G, l *class.Lock, st stack.ID) {
	gs.HoldBack(held.Pending{LockID: l.ID, Left: 1, Stack: uint32(st)})
}

// gaveUpOverRead is called when gs's write LockContext of l, which gs
// held already when it began, gave up. If the hold was for reading (one
// for writing was reported at once), the wait could only end by giving
// up, had the hold been gs's own: the report that gs locks what it
// read-holds is held back until gs releases itself a read hold of l that
// it had at this moment (see held.Pending).
func gaveUpOverRead(gs *held.G, l *class.Lock) {
	if heldBy(gs, gs.Tag(), l, false) {
		return
	}
	gs.HoldBack(held.Pending{LockID: l.ID, Left: 1, Stack: uint32(stack.Capture()), Write: true})
}

// publishProved publishes the reports held back on gs that its own
// releases of l proved (held.proofs.ReleasedRead).
func publishProved(gs *held.G, l *class.Lock, ps []held.Pending) {
	for _, p := range ps {
		reportRecursive(gs, l, true, !p.Write, stack.ID(p.Stack))
	}
}

// reportCopied reports that gs, taking the mutex whose identity is now l,
// found that mutex sharing its former identity, old, with one gs holds.
func reportCopied(gs *held.G, old, l *class.Lock) {
	st := stack.Capture()
	addr := l.Label().Addr
	publish(Violation{
		Kind:      KindCopiedLock,
		Message:   copiedMessage(gs.ID(), l.Kind.String(), addr, old.Name(), old.Kind.String(), l.Name()),
		Time:      time.Now(),
		Goroutine: gs.ID(),
		Stack:     frames(st),
		Locks:     []LockRef{ref(old), ref(l)},
		Detail:    copiedDetail,
	}.perCode(KindCopiedLock, old, st))
}

// reportBadUnlock reports goroutine gid's bad unlock of l (what:
// unlockOfUnlocked, ...).
func reportBadUnlock(gid int64, l *class.Lock, what string) {
	st := stack.Capture()
	publish(Violation{
		Kind:      KindBadUnlock,
		Message:   badUnlockMessage(what, l.Name()),
		Time:      time.Now(),
		Goroutine: gid,
		Stack:     frames(st),
		Locks:     []LockRef{ref(l)},
	}.perCode(KindBadUnlock, l, st))
}

func reportNotHeld(gid int64, l *class.Lock, read bool) {
	st := stack.Capture()
	publish(Violation{
		Kind:      KindNotHeld,
		Message:   notHeldMessage(gid, l.Name(), read),
		Time:      time.Now(),
		Goroutine: gid,
		Stack:     frames(st),
		Locks:     []LockRef{ref(l)},
	}.perCode(KindNotHeld, l, st))
}
