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

// TestMixedWithSync hammers one mutex from goroutines that mix the fast
// paths with sync's methods: the counter it guards must come out exact.
func TestMixedWithSync(t *testing.T) {
	skipUnlessEnabled(t)
	const goroutines, rounds = 8, 20000
	var (
		m  sync.Mutex
		n  int
		wg sync.WaitGroup
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
			for i := range rounds {
				lock(i + g)
				n++
				unlock(i + g)
			}
		})
	}
	wg.Wait()
	if n != goroutines*rounds {
		t.Fatalf("counter = %d, want %d: the fast paths broke mutual exclusion", n, goroutines*rounds)
	}
}
