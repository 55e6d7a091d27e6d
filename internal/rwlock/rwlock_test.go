package rwlock_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/rwlock"
)

// start runs f in a new goroutine and returns a channel closed when f
// returns.
func start(f func()) (done chan struct{}) {
	done = make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	return done
}

// stillRunning reports whether the goroutine start returned done for is
// still running after a short while.
func stillRunning(done chan struct{}) bool {
	select {
	case <-done:
		return false
	case <-time.After(20 * time.Millisecond):
		return true
	}
}

// The lock is five words: the count, the writers' queue, leaving, the gate
// and the queues' pointer. The count is 64-bit aligned wherever the lock
// is, as 64-bit atomics need on 32-bit platforms.
func TestSize(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(rwlock.RWMutex{}), 5*unsafe.Sizeof(int64(0)))
	var s struct {
		b  byte
		rw rwlock.RWMutex
	}
	assert.Zero(t, unsafe.Offsetof(s.rw)%8)
}

func TestZeroValueLocks(t *testing.T) {
	var rw rwlock.RWMutex
	rw.Lock()
	assert.False(t, rw.TryLock())
	assert.False(t, rw.TryRLock())
	require.True(t, rw.Unlock())
	rw.RLock()
	assert.True(t, rw.TryRLock(), "readers share")
	assert.False(t, rw.TryLock())
	require.True(t, rw.RUnlock())
	require.True(t, rw.RUnlock())
	assert.True(t, rw.TryLock())
	require.True(t, rw.Unlock())
	assert.Zero(t, atomic.LoadInt64(rw.Readers()))
}

func TestWriterWaitsForReaders(t *testing.T) {
	var rw rwlock.RWMutex
	rw.RLock()
	rw.RLock()
	w := start(rw.Lock)
	require.True(t, stillRunning(w), "the writer got in past two readers")
	// A reader that comes after the writer waits behind it.
	r := start(rw.RLock)
	require.True(t, stillRunning(r), "a reader got in past a waiting writer")
	assert.False(t, rw.TryRLock())

	require.True(t, rw.RUnlock())
	require.True(t, stillRunning(w), "the writer got in past a reader")
	require.True(t, rw.RUnlock())
	<-w
	require.True(t, stillRunning(r), "a reader got in while the writer held the lock")
	require.True(t, rw.Unlock())
	<-r
	require.True(t, rw.RUnlock())
	assert.True(t, rw.TryLock())
}

func TestMisuseIsReportedAndChangesNothing(t *testing.T) {
	var rw rwlock.RWMutex
	assert.False(t, rw.RUnlock(), "RUnlock of unlocked")
	assert.False(t, rw.Unlock(), "Unlock of unlocked")
	assert.Zero(t, atomic.LoadInt64(rw.Readers()))

	rw.RLock()
	assert.False(t, rw.Unlock(), "Unlock of read-locked")
	require.True(t, rw.RUnlock())

	rw.Lock()
	assert.False(t, rw.RUnlock(), "RUnlock of write-locked")
	require.True(t, rw.Unlock())
	assert.True(t, rw.TryLock(), "the lock works after misuse")
	require.True(t, rw.Unlock())
}

// The split read side: an add that finds a writer, then the wait.
func TestAdmittedReaderWaitsForTheWriter(t *testing.T) {
	var rw rwlock.RWMutex
	rw.Lock()
	v := atomic.AddInt64(rw.Readers(), 1)
	require.Negative(t, v, "a writer holds the lock")
	require.True(t, rw.Enqueue(v), "the reader queues behind the writer")
	adm := (*rwlock.Admitted)(&rw)
	assert.False(t, adm.TryLock(), "admitted while the writer holds the lock")
	require.True(t, rw.Unlock())
	assert.True(t, adm.TryLock(), "the writer's Unlock admits the queued reader")
	assert.False(t, rw.TryLock(), "the admitted reader holds the lock")
	require.True(t, rw.RUnlock())

	rw.Lock()
	v = atomic.AddInt64(rw.Readers(), 1)
	require.Negative(t, v)
	require.True(t, rw.Enqueue(v))
	in := start(adm.Lock)
	require.True(t, stillRunning(in))
	require.True(t, rw.Unlock())
	<-in
	require.Zero(t, atomic.AddInt64(rw.Readers(), -1))

	// A reader that counted itself but had not queued when the writer
	// unlocked is in without a token.
	rw.Lock()
	v = atomic.AddInt64(rw.Readers(), 1)
	require.Negative(t, v)
	require.True(t, rw.Unlock())
	assert.False(t, rw.Enqueue(v), "the writer has gone: the reader is in")
	assert.False(t, adm.TryLock(), "a token was sent for a reader that did not queue")
	assert.False(t, rw.TryLock(), "the reader holds the lock")
	require.True(t, rw.RUnlock())
	assert.True(t, rw.TryLock())
	require.True(t, rw.Unlock())
}

// Readers and writers hammer one lock: a writer must always be alone, and
// readers must never see a writer's half-done update.
func TestMutualExclusion(t *testing.T) {
	var (
		rw      rwlock.RWMutex
		a, b    int // a writer sets both; readers check they agree
		writers atomic.Int32
		bad     atomic.Int32
		wg      sync.WaitGroup
	)
	const goroutines, rounds = 8, 2000
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				switch {
				case (g+i)%5 == 0:
					rw.Lock()
					if writers.Add(1) != 1 {
						bad.Add(1)
					}
					a++
					b = a
					writers.Add(-1)
					rw.Unlock()
				case (g+i)%5 == 1 && rw.TryLock():
					a++
					b = a
					rw.Unlock()
				case (g+i)%5 == 2 && rw.TryRLock():
					if a != b || writers.Load() != 0 {
						bad.Add(1)
					}
					rw.RUnlock()
				default:
					rw.RLock()
					if a != b || writers.Load() != 0 {
						bad.Add(1)
					}
					rw.RUnlock()
				}
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, bad.Load())
	assert.Zero(t, atomic.LoadInt64(rw.Readers()))
	assert.True(t, rw.TryLock())
}

func TestLockerViews(t *testing.T) {
	var rw rwlock.RWMutex
	r, w := (*rwlock.Reader)(&rw), (*rwlock.Writer)(&rw)
	w.Lock()
	assert.False(t, r.TryLock())
	w.Unlock()
	r.Lock()
	assert.True(t, r.TryLock())
	assert.False(t, w.TryLock())
	r.Unlock()
	r.Unlock()
	assert.PanicsWithValue(t, "rwlock: RUnlock of unlocked RWMutex", r.Unlock)
	assert.PanicsWithValue(t, "rwlock: Unlock of unlocked RWMutex", w.Unlock)
}
