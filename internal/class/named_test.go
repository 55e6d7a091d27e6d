package class_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/kind"
)

// collect runs the garbage collector until cond holds, at most a few
// seconds: cleanups run after a collection, on a goroutine of their own.
func collect(t *testing.T, cond func() bool) bool {
	t.Helper()
	for range 200 {
		runtime.GC()
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// settle collects until the registry stops shrinking, so that what other
// tests left is gone before a test counts classes.
func settle(t *testing.T) {
	t.Helper()
	last, same := -1, 0
	for range 200 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
		if n := class.Count(); n == last {
			if same++; same == 3 {
				return
			}
		} else {
			last, same = n, 0
		}
	}
}

//go:noinline
func makeNamed(prefix string, n int) []*class.Lock {
	ls := make([]*class.Lock, n)
	for i := range ls {
		ls[i] = class.NewNamed(fmt.Sprintf("%s-%d", prefix, i), kind.Mutex, uintptr(i))
	}
	return ls
}

func TestNamedClassFreedWithItsLastLock(t *testing.T) {
	settle(t)
	base := class.Count()
	ls := makeNamed("conn", 10000)
	if got := class.Count(); got < base+10000 {
		t.Fatalf("%d classes, want at least %d", got, base+10000)
	}
	c := ls[0].Class
	ls = nil
	if !collect(t, func() bool { return class.Count() <= base }) {
		t.Fatalf("%d named classes left, want %d", class.Count(), base)
	}
	if class.Registered(c) {
		t.Fatal("a freed class is still found by name")
	}
	if l := class.NewNamed("conn-0", kind.Mutex, 0); l.Class == c || l.Seq() != 1 {
		t.Fatalf("a new lock of a freed name joined the old class: %+v", l)
	}
}

// While one lock of a class lives the class stays, however many others
// of it die.
func TestNamedClassStaysWhileALockLives(t *testing.T) {
	keep := class.NewNamed("stays", kind.Mutex, 1)
	func() {
		for i := range 1000 {
			class.NewNamed("stays", kind.Mutex, uintptr(i))
		}
	}()
	for range 3 {
		runtime.GC()
	}
	time.Sleep(10 * time.Millisecond)
	if !class.Registered(keep.Class) {
		t.Fatal("the class of a live lock was freed")
	}
	if l := class.NewNamed("stays", kind.Mutex, 2); l.Class != keep.Class || l.Seq() != 1002 {
		t.Fatalf("new lock %+v, want class %d, seq 1002", l, keep.Class.ID)
	}
	runtime.KeepAlive(keep)
}

// A class the graph keeps stays, dormant, after its last lock dies, and a
// new lock of its name joins it; past MaxDormant, the oldest dormant
// classes are freed and Forget hears of them.
func TestKeptClassesStayDormantUpToABound(t *testing.T) {
	defer class.SetMaxDormant(5)()
	var mu sync.Mutex
	var forgotten []*class.Class
	defer class.SetForget(func(c *class.Class) {
		mu.Lock()
		forgotten = append(forgotten, c)
		mu.Unlock()
	})()

	settle(t)
	base, baseDormant := class.Count(), class.Dormant()
	classes := func() []*class.Class {
		ls := makeNamed("kept", 8)
		cs := make([]*class.Class, len(ls))
		for i, l := range ls {
			cs[i] = l.Class
			class.Keep(cs[i])
		}
		return cs
	}()
	if !collect(t, func() bool { return class.Dormant() == baseDormant+5 && class.Count() == base+5 }) {
		t.Fatalf("%d dormant, %d named; want %d and %d", class.Dormant(), class.Count(), baseDormant+5, base+5)
	}
	mu.Lock()
	n := len(forgotten)
	mu.Unlock()
	if n != 3 {
		t.Fatalf("Forget called %d times, want 3", n)
	}
	var kept *class.Class
	for _, c := range classes {
		if class.Registered(c) {
			kept = c
		}
	}
	if kept == nil {
		t.Fatal("no class stayed")
	}
	l := class.NewNamed(kept.Name, kind.Mutex, 0)
	if l.Class != kept {
		t.Fatal("a new lock of a dormant class's name got another class")
	}
	if class.Dormant() != baseDormant+4 {
		t.Fatalf("%d dormant after one came back, want %d", class.Dormant(), baseDormant+4)
	}
	runtime.KeepAlive(l)

	// Unkeep frees a dormant class at once.
	for _, c := range classes {
		class.Unkeep(c)
	}
	if got := class.Dormant(); got != baseDormant {
		t.Fatalf("%d dormant after Unkeep, want %d", got, baseDormant)
	}
}
