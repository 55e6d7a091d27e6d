package waitfor

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/kind"
)

func ms(n int64) int64 { return n * int64(time.Millisecond) }

// W3: a wait counts from the last progress the monitor saw. A lock that
// changes hands is contended, not stuck; a wait that shows no progress (a
// Once, a lock whose holder is not tracked) counts from its start.
func TestALockWaitCountsFromTheLastHandOff(t *testing.T) {
	for _, c := range []struct {
		name   string
		kind   string
		lk     kind.Kind
		holder bool
		moving bool
	}{
		{"lock", KindLock, kind.Mutex, true, true},
		{"untracked lock", KindLock, kind.Mutex, false, false},
		{"once", KindOnce, kind.Once, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := class.New(nil, c.lk, 1)
			w := &Wait{Kind: c.kind, Lock: l, HolderKnown: c.holder, start: ms(1000)}
			if got := w.stuckFor(ms(1100)); got != 100*time.Millisecond {
				t.Fatalf("before any progress: stuck for %v, want 100ms", got)
			}
			l.SetHolder(7)
			want := 500 * time.Millisecond
			if c.moving {
				want = 0 // the monitor saw it move at 1500
			}
			if got := w.stuckFor(ms(1500)); got != want {
				t.Errorf("at the look after a hand-off: stuck for %v, want %v", got, want)
			}
		})
	}
}

// W3: a WaitGroup wait counts from the last time the monitor saw its
// counter at a new low. A group whose tasks keep finishing is moving; one
// that churns (Add(1), Done) above a task that never ends is stuck from
// its lowest count.
func TestAWaitGroupWaitCountsFromItsLastLow(t *testing.T) {
	var n atomic.Int64
	n.Store(5)
	w := &Wait{Kind: KindWaitGroup, Count: func() (int64, bool) { return n.Load(), true }, start: ms(1000)}
	look := func(at int64, want time.Duration) {
		t.Helper()
		if got := w.stuckFor(ms(at)); got != want {
			t.Errorf("at %dms with %d left: stuck for %v, want %v", at, n.Load(), got, want)
		}
	}
	look(1100, 100*time.Millisecond)
	n.Add(-1) // a task done: progress
	look(1200, 0)
	n.Add(-3)
	look(1300, 0)
	for at := int64(1400); at <= 1800; at += 100 {
		n.Add(1) // churn above the last low
		look(at, time.Duration(at-1300)*time.Millisecond)
		n.Add(-1)
	}
	n.Add(-1) // the last task
	look(1900, 0)
}

// A Tally counts a wait once, whether it ended before or after it was
// followed, and a wait another Tally follows not at all.
func TestTallyFollowsWaitsUntilTheyEnd(t *testing.T) {
	var a, b Tally
	if _, over := a.Ended(); over {
		t.Fatal("a tally that followed nothing has no ended waits")
	}
	w1 := &Wait{Goroutine: 1, start: ms(-1000)} // a second old
	w2 := &Wait{Goroutine: 2, start: ms(-1000)}
	a.Follow(w1)
	a.Follow(w1) // twice: once
	b.Follow(w1) // another tally's too (a long-wait's, then a deadlock's)
	var c Tally
	c.Follow(w1) // a third: cannot be followed
	End(w2)
	a.Follow(w2) // ended already
	if _, over := a.Ended(); over {
		t.Fatal("w1 is still under way")
	}
	if _, over := b.Ended(); over {
		t.Fatal("w1 is still under way, for b too")
	}
	End(w1)
	d, over := a.Ended()
	if !over || d < time.Second {
		t.Fatalf("both ended, the longest after a second or more: got %v, %v", d, over)
	}
	if a.Followed() != 2 {
		t.Errorf("followed %d waits, want 2", a.Followed())
	}
	if d, over := b.Ended(); !over || d < time.Second {
		t.Errorf("b followed w1, which ended: got %v, %v", d, over)
	}
	if _, over := c.Ended(); over {
		t.Error("c could not follow w1: it never says its waits ended")
	}
}

// Stuck follows a wait's chain to the goroutines that could end it: a
// holder asleep or running can, one blocked on a channel or exited
// cannot; a wait whose blockers are unknown is stuck only when nothing
// else is awake.
//
// The goroutine ids are far from the test's own, which Stuckness treats as
// the checker.
func TestStuckFollowsTheChainToAnAwakeGoroutine(t *testing.T) {
	routine := func(id, state string) string {
		return "goroutine " + id + " [" + state + "]:\nmain.f()\n\t/x/main.go:10 +0x1d\ncreated by main.main in goroutine 1\n\t/x/main.go:20 +0x25"
	}
	l := class.New(nil, kind.Mutex, 1)
	l.SetHolder(1000009)
	waiter := &Wait{Goroutine: 1000010, Kind: KindLock, Lock: l, HolderKnown: true}
	unknown := &Wait{Goroutine: 1000011, Kind: KindWaitGroup, Blockers: func([]int64) []int64 { return nil }}
	g := &Graph{waits: map[int64]*Wait{1000010: waiter, 1000011: unknown}}
	for _, c := range []struct {
		holder, other       string
		stuck, unknownStuck bool
	}{
		{"chan receive", "chan receive", true, true},
		{"sleep", "chan receive", false, false},
		{"running", "select", false, false},
		{"syscall", "select", false, true}, // a holder in a system call can act; for unknown blockers it counts as blocked
		{"chan receive", "sleep", true, false},
	} {
		dump := routine("1000009", c.holder) + "\n\n" + routine("1000010", "sync.Mutex.Lock") + "\n\n" +
			routine("1000011", "sync.WaitGroup.Wait") + "\n\n" + routine("1000012", c.other)
		d := parseDump([]byte(dump))
		if got := g.Stuckness(d)(waiter); got != c.stuck {
			t.Errorf("holder %s: stuck %v, want %v", c.holder, got, c.stuck)
		}
		if got := g.Stuckness(d)(unknown); got != c.unknownStuck {
			t.Errorf("holder %s, other %s: a wait with unknown blockers stuck %v, want %v", c.holder, c.other, got, c.unknownStuck)
		}
	}
	// The holder has exited: nothing can end the wait.
	d := parseDump([]byte(routine("1000010", "sync.Mutex.Lock")))
	if !g.Stuckness(d)(waiter) {
		t.Error("a wait for an exited holder is stuck")
	}
	// A bounded wait ends by itself.
	if g.Stuckness(d)(&Wait{Goroutine: 1000010, Kind: KindLock, Lock: l, HolderKnown: true, Bounded: true}) {
		t.Error("a bounded wait is not stuck")
	}
}

// A wait needs every goroutine it names to act: one blocked for good is
// enough to make it stuck, however many others are awake. A goroutine in
// a system call (os/signal's) or syncwatch's own does not count as awake
// for a wait whose blockers are unknown; a goroutine parked in an
// iter.Pull coroutine is blocked.
func TestStuckNeedsEveryBlocker(t *testing.T) {
	routine := func(id, state, fn string) string {
		return "goroutine " + id + " [" + state + "]:\n" + fn + "()\n\t/x/main.go:10 +0x1d\ncreated by main.main in goroutine 1\n\t/x/main.go:20 +0x25"
	}
	group := &Wait{Goroutine: 1000010, Kind: KindWaitGroup, Blockers: func([]int64) []int64 { return []int64{1000008, 1000009} }}
	unknown := &Wait{Goroutine: 1000011, Kind: KindWaitGroup, Blockers: func([]int64) []int64 { return nil }}
	g := &Graph{waits: map[int64]*Wait{1000010: group, 1000011: unknown}}
	d := parseDump([]byte(routine("1000008", "sleep", "main.sleeper") + "\n\n" + routine("1000009", "chan receive", "main.never") + "\n\n" +
		routine("1000010", "sync.WaitGroup.Wait", "main.close") + "\n\n" + routine("1000011", "sync.WaitGroup.Wait", "main.gate") + "\n\n" +
		routine("1000012", "syscall", "os/signal.signal_recv") + "\n\n" +
		routine("1000013", "syscall", "github.com/syncwatch/syncwatch/internal/gls.startMembarrier.func1.1")))
	stuck := g.Stuckness(d)
	if !stuck(group) {
		t.Error("a group with one task blocked for good is stuck, whatever the others do")
	}
	d = parseDump([]byte(routine("1000008", "sleep", "main.sleeper") + "\n\n" + routine("1000009", "coroutine", "main.pulled") + "\n\n" +
		routine("1000010", "sync.WaitGroup.Wait", "main.close") + "\n\n" + routine("1000011", "sync.WaitGroup.Wait", "main.gate") + "\n\n" +
		routine("1000012", "syscall", "os/signal.signal_recv")))
	if !g.Stuckness(d)(group) {
		t.Error("a task parked in a coroutine is blocked")
	}
	d = parseDump([]byte(routine("1000008", "chan receive", "main.a") + "\n\n" + routine("1000011", "sync.WaitGroup.Wait", "main.gate") + "\n\n" +
		routine("1000012", "syscall", "os/signal.signal_recv") + "\n\n" +
		routine("1000013", "syscall", "github.com/syncwatch/syncwatch/internal/gls.startMembarrier.func1.1")))
	if !g.Stuckness(d)(unknown) {
		t.Error("goroutines in system calls kept a wait with unknown blockers from being stuck")
	}
}

// W7: the check at exit follows a leak detection, whose collection queues
// cleanups; the runtime's goroutine running them shows in a dump, even
// between two of them with runtime.runCleanups alone on its stack. Seen
// awake, it would keep a wait whose blockers are unknown from being
// reported: the check looks again while it is the only one awake.
func TestTheExitCheckLooksPastTheCleanups(t *testing.T) {
	routine := func(id, state, fn string) string {
		return "goroutine " + id + " [" + state + "]:\n" + fn + "()\n\t/x/main.go:10 +0x1d\ncreated by main.main in goroutine 1\n\t/x/main.go:20 +0x25"
	}
	const betweenCleanups = "goroutine 1000020 [runnable]:\nruntime.runCleanups()\n\t/usr/local/go/src/runtime/mcleanup.go:745 +0x13f"
	unknown := &Wait{Goroutine: 1000011, Kind: KindWaitGroup, Blockers: func([]int64) []int64 { return nil }}
	g := &Graph{waits: map[int64]*Wait{1000011: unknown}}
	waiting := routine("1000011", "sync.WaitGroup.Wait", "main.gate")
	cleaning := parseDump([]byte(waiting + "\n\n" + betweenCleanups))
	if g.Stuckness(cleaning)(unknown) {
		t.Fatal("the cleanup goroutine counts as awake for a single look")
	}
	quiet := parseDump([]byte(waiting))
	for _, c := range []struct {
		name  string
		dumps []*Dump
		looks int
		stuck bool
	}{
		{"cleanups then quiet", []*Dump{cleaning, cleaning, quiet}, 3, true},
		{"quiet", []*Dump{quiet}, 1, true},
		{"a cleanup and another goroutine", []*Dump{parseDump([]byte(waiting + "\n\n" + betweenCleanups + "\n\n" +
			routine("1000012", "running", "main.spin"))), quiet}, 1, false},
	} {
		looks := 0
		d := freshForExit(g, func() *Dump { looks++; return c.dumps[looks-1] }, time.Hour)
		if looks != c.looks {
			t.Errorf("%s: %d looks, want %d", c.name, looks, c.looks)
		}
		if got := g.Stuckness(d)(unknown); got != c.stuck {
			t.Errorf("%s: stuck %v, want %v", c.name, got, c.stuck)
		}
	}
	// Cleanups that run on past the bound: the last look is the verdict.
	looks := 0
	d := freshForExit(g, func() *Dump { looks++; return cleaning }, 5*time.Millisecond)
	if looks < 2 || g.Stuckness(d)(unknown) {
		t.Errorf("cleaning for good: %d looks, stuck %v; want more than one, false", looks, g.Stuckness(d)(unknown))
	}
}

// W7: the check at exit looks again for the cleanup goroutine only when a
// wait it could keep from its report is there (blockers unknown): not in
// the common VerifyNone case, with no waits, where a cleanup running on (a
// program's own, CPU-bound, or the cleanup goroutine starved on a loaded
// machine) would cost up to 100 ms per test.
func TestTheExitCheckDoesNotWaitWithoutWaits(t *testing.T) {
	const busyCleanup = "goroutine 1000020 [runnable]:\nruntime.runCleanups()\n\t/usr/local/go/src/runtime/mcleanup.go:745 +0x13f"
	cleaning := parseDump([]byte(busyCleanup))
	g := &Graph{waits: map[int64]*Wait{}} // nothing waits
	looks := 0
	for range 3 { // three tests' VerifyNone
		freshForExit(g, func() *Dump { looks++; return cleaning }, exitCleanupWait)
	}
	if looks != 3 {
		t.Errorf("no waits: %d looks for 3 checks; want one each", looks)
	}
}
