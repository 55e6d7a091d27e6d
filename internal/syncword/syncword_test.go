package syncword_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/syncwatch/syncwatch/internal/syncword"
)

// TestVerify fails loudly when a Go release moves sync's state words: the
// fast paths are on exactly when the layout checks out.
func TestVerify(t *testing.T) {
	if got := syncword.Verify(); got != syncword.Enabled {
		t.Fatalf("Verify() = %v with Enabled = %v: sync's layout is not the one the fast paths rely on", got, syncword.Enabled)
	}
}

// skipUnlessEnabled skips tests of the fast paths in builds that compile
// them out (the race detector, unchecked Go releases).
func skipUnlessEnabled(t *testing.T) {
	if !syncword.Enabled {
		t.Skip("fast paths compiled out in this build")
	}
}

func TestMutexFastPathDeclinesWhenContended(t *testing.T) {
	skipUnlessEnabled(t)
	var m sync.Mutex
	m.Lock()
	if syncword.TryLock(&m) {
		t.Fatal("TryLock took a locked mutex")
	}
	waiting := make(chan struct{})
	done := make(chan struct{})
	go func() {
		close(waiting)
		m.Lock() // a waiter: Unlock must now wake it, so the fast path declines
		close(done)
	}()
	<-waiting
	for !waiterQueued(&m) {
		runtime.Gosched()
	}
	if syncword.TryUnlock(&m) {
		t.Fatal("TryUnlock released a mutex with a waiter")
	}
	m.Unlock()
	<-done
	m.Unlock()
	if syncword.TryUnlock(&m) {
		t.Fatal("TryUnlock released an unlocked mutex")
	}
}

// waiterQueued reports whether a goroutine has registered as m's waiter:
// a waiter makes the state word differ from plain "locked".
func waiterQueued(m *sync.Mutex) bool { return atomic.LoadInt32(syncword.State(m)) != syncword.Locked }

func TestRWMutexFastPathDeclinesWithWriter(t *testing.T) {
	skipUnlessEnabled(t)
	var rw sync.RWMutex
	rw.Lock()
	if syncword.TryRLock(&rw) {
		t.Fatal("TryRLock read-locked a write-locked RWMutex")
	}
	rw.Unlock()
	rw.RLock()
	got := make(chan struct{})
	go func() {
		rw.Lock() // a writer waits for the reader: RUnlock must wake it
		close(got)
	}()
	for rw.TryRLock() { // once the writer is pending, new readers are refused
		rw.RUnlock()
		runtime.Gosched()
	}
	if syncword.TryRUnlock(&rw) {
		t.Fatal("TryRUnlock released the last reader without waking the writer")
	}
	rw.RUnlock()
	<-got
	rw.Unlock()
}

// TestMixedWithSync hammers one mutex and one RWMutex from goroutines that
// mix the fast paths with sync's methods: the counters they guard must
// come out exact, and readers must never see a writer's half-done update.
func TestMixedWithSync(t *testing.T) {
	skipUnlessEnabled(t)
	const goroutines, rounds = 8, 20000
	var (
		m    sync.Mutex
		n    int
		rw   sync.RWMutex
		a, b int
		torn = make(chan int, goroutines)
		wg   sync.WaitGroup
	)
	lock := func(i int) {
		if i%2 == 0 || !syncword.TryLock(&m) {
			m.Lock()
		}
	}
	unlock := func(i int) {
		if i%3 == 0 || !syncword.TryUnlock(&m) {
			m.Unlock()
		}
	}
	for g := range goroutines {
		wg.Go(func() {
			bad := 0
			for i := range rounds {
				lock(i + g)
				n++
				unlock(i + g)
				if i%4 == 0 {
					rw.Lock()
					a++
					b++
					rw.Unlock()
					continue
				}
				if !syncword.TryRLock(&rw) {
					rw.RLock()
				}
				if a != b {
					bad++
				}
				if !syncword.TryRUnlock(&rw) {
					rw.RUnlock()
				}
			}
			torn <- bad
		})
	}
	wg.Wait()
	close(torn)
	for bad := range torn {
		if bad != 0 {
			t.Fatalf("readers saw %d torn updates", bad)
		}
	}
	if n != goroutines*rounds {
		t.Fatalf("counter = %d, want %d: the fast paths broke mutual exclusion", n, goroutines*rounds)
	}
	if want := goroutines * rounds / 4; a != want || b != want {
		t.Fatalf("a, b = %d, %d, want %d", a, b, want)
	}
}
