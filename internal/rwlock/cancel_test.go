package rwlock_test

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/rwlock"
)

// The waits given up, step by step: each test stops the goroutines it
// plays between the steps of the protocol (see "Giving up" in doc.go).

// announcing starts a writer that takes the writers' queue and waits in
// LockQueued(done), and returns once it has announced itself. got
// receives LockQueued's result.
func announcing(t *testing.T, rw *rwlock.RWMutex, done <-chan struct{}) (got chan bool) {
	t.Helper()
	got = make(chan bool, 1)
	go func() {
		(*rwlock.WriterQueue)(rw).Lock()
		got <- rw.LockQueued(done)
	}()
	for atomic.LoadInt64(rw.Readers()) >= 0 {
		runtime.Gosched()
	}
	return got
}

func TestWriterGivesUpAndLetsReadersIn(t *testing.T) {
	var rw rwlock.RWMutex
	rw.RLock()
	done := make(chan struct{})
	got := announcing(t, &rw, done)
	assert.False(t, rw.TryRLock(), "a reader got in past a waiting writer")
	queued := start(rw.RLock)
	require.True(t, stillRunning(queued), "a reader got in past a waiting writer")

	close(done)
	require.False(t, <-got, "the writer got in past a reader")
	<-queued // the reader queued behind the writer is let in
	assert.True(t, rw.TryRLock(), "a new reader is held out by a writer that gave up")
	assert.Equal(t, int64(3), atomic.LoadInt64(rw.Readers()))
	assert.False(t, rw.TryLock())
	for range 3 {
		require.True(t, rw.RUnlock())
	}
	assert.True(t, rw.TryLock(), "the lock is not free")
	require.True(t, rw.Unlock())
}

// A reader that counted itself out of the writer's wait in rw's count but
// not yet in leaving when the writer gave up must not disturb the next
// writer's wait.
func TestLeaverOfWriterThatGaveUp(t *testing.T) {
	var rw rwlock.RWMutex
	rw.RLock()
	rw.RLock()
	done := make(chan struct{})
	got := announcing(t, &rw, done)
	rw.ReaderOut()
	v := rw.AddReader(-1) // the first reader is half way out
	require.Negative(t, v)
	close(done)
	require.False(t, <-got)
	require.True(t, rw.ReaderLeft(v), "the reader finishes leaving")

	// One reader is in: the next writer waits for it, and only for it.
	w := start(rw.Lock)
	require.True(t, stillRunning(w), "a writer got in past a reader (a token sent to a writer that had gone?)")
	require.True(t, rw.RUnlock())
	<-w
	require.True(t, rw.Unlock())
	rw.RLock()
	w = start(rw.Lock)
	require.True(t, stillRunning(w), "a writer got in past a reader")
	require.True(t, rw.RUnlock())
	<-w
	require.True(t, rw.Unlock())
}

// A reader that counted itself but had not queued when the writer gave up
// is in without a token.
func TestArrivalAtWriterThatGaveUp(t *testing.T) {
	var rw rwlock.RWMutex
	rw.RLock()
	done := make(chan struct{})
	got := announcing(t, &rw, done)
	v := rw.AddReader(1)
	require.Negative(t, v)
	close(done)
	require.False(t, <-got)
	assert.False(t, rw.Enqueue(v), "the writer has gone: the reader is in")
	assert.False(t, (*rwlock.Admitted)(&rw).TryLock(), "a token was sent for a reader that did not queue")
	assert.False(t, rw.TryLock())
	require.True(t, rw.RUnlock())
	require.True(t, rw.RUnlock())
	assert.True(t, rw.TryLock())
	require.True(t, rw.Unlock())
}

// The last reader leaves just before the writer gives up: the writer has
// the lock, and says so.
func TestWriterGivesUpTooLate(t *testing.T) {
	var rw rwlock.RWMutex
	rw.RLock()
	done := make(chan struct{})
	got := announcing(t, &rw, done)
	require.True(t, rw.RUnlock())
	close(done)
	require.True(t, <-got, "the writer was let in before it gave up")
	assert.False(t, rw.TryRLock())
	require.True(t, rw.Unlock())
}

func TestReaderGivesUp(t *testing.T) {
	var rw rwlock.RWMutex
	rw.Lock()
	done := make(chan struct{})
	close(done)
	assert.False(t, rw.RLockOrCancel(done), "a reader got in past a writer")
	require.True(t, rw.Unlock())
	assert.True(t, rw.TryLock(), "a reader that gave up is still counted")
	require.True(t, rw.Unlock())

	// Not given up: it gets in when the writer lets go.
	rw.Lock()
	var ok atomic.Bool
	r := start(func() { ok.Store(rw.RLockOrCancel(make(chan struct{}))) })
	require.True(t, stillRunning(r))
	require.True(t, rw.Unlock())
	<-r
	require.True(t, ok.Load())
	require.True(t, rw.RUnlock())
	assert.True(t, rw.TryLock())
	require.True(t, rw.Unlock())
}

// A queued reader gives up after the writer has let it in: it holds the
// lock, through the token sent for it.
func TestReaderGivesUpTooLate(t *testing.T) {
	var rw rwlock.RWMutex
	rw.Lock()
	v := rw.AddReader(1)
	require.True(t, rw.Enqueue(v))
	require.True(t, rw.Unlock())
	assert.False(t, rw.Dequeue(v), "taken back after the writer let it in")
	require.True(t, (*rwlock.Admitted)(&rw).TryLock(), "no token for the reader")
	assert.False(t, rw.TryLock())
	require.True(t, rw.RUnlock())
	assert.True(t, rw.TryLock())
	require.True(t, rw.Unlock())
}

// A reader that gives up after its writer let it in and a later writer
// counted it as in: the later writer is let in.
func TestCancelReaderUnderALaterWriter(t *testing.T) {
	var rw rwlock.RWMutex
	rw.Lock()
	v := rw.AddReader(1)
	require.Negative(t, v)
	require.True(t, rw.Unlock()) // the reader is in, not yet told
	w := start(rw.Lock)
	require.True(t, stillRunning(w), "the second writer got in past the reader")
	rw.CancelReader(v)
	<-w
	require.True(t, rw.Unlock())
	assert.Zero(t, atomic.LoadInt64(rw.Readers()))

	// Given up while its writer is still there: the writer is not told.
	rw.Lock()
	v = rw.AddReader(1)
	rw.CancelReader(v)
	require.True(t, rw.Unlock())
	assert.Zero(t, atomic.LoadInt64(rw.Readers()))
	assert.True(t, rw.TryLock())
	require.True(t, rw.Unlock())
}

// Waits given up at random race with readers and writers coming and
// going: writers always exclude, and nothing stays blocked.
func TestGivingUpStress(t *testing.T) {
	var (
		rw               rwlock.RWMutex
		writers, readers atomic.Int32
		bad              atomic.Int32
		gaveUp           [2]atomic.Int32 // writers, readers
		wg               sync.WaitGroup
	)
	rounds := 3000
	if testing.Short() {
		rounds = 300
	}
	write := func() {
		if writers.Add(1) != 1 || readers.Load() != 0 {
			bad.Add(1)
		}
		runtime.Gosched()
		writers.Add(-1)
	}
	read := func() {
		readers.Add(1)
		if writers.Load() != 0 {
			bad.Add(1)
		}
		runtime.Gosched()
		readers.Add(-1)
	}
	// after closes a channel after a short random delay (or at once).
	after := func(r *rand.Rand) <-chan struct{} {
		c := make(chan struct{})
		if d := time.Duration(r.IntN(40)) * time.Microsecond; d > 0 {
			time.AfterFunc(d, func() { close(c) })
		} else {
			close(c)
		}
		return c
	}
	for g := range 6 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range rounds {
				switch r.IntN(6) {
				case 0:
					(*rwlock.WriterQueue)(&rw).Lock()
					if rw.LockQueued(after(r)) {
						write()
						rw.Unlock()
					} else {
						gaveUp[0].Add(1)
					}
				case 1:
					if rw.RLockOrCancel(after(r)) {
						read()
						rw.RUnlock()
					} else {
						gaveUp[1].Add(1)
					}
				case 2:
					rw.Lock()
					write()
					rw.Unlock()
				case 3:
					if rw.TryLock() {
						write()
						rw.Unlock()
					}
				case 4:
					if rw.TryRLock() {
						read()
						rw.RUnlock()
					}
				default:
					rw.RLock()
					read()
					rw.RUnlock()
				}
			}
		})
	}
	finished := start(wg.Wait)
	select {
	case <-finished:
	case <-time.After(60 * time.Second):
		t.Fatal("a goroutine stayed blocked")
	}
	assert.Zero(t, bad.Load(), "a writer did not exclude")
	t.Logf("gave up: %d writers, %d readers", gaveUp[0].Load(), gaveUp[1].Load())
	assert.Zero(t, atomic.LoadInt64(rw.Readers()))
	assert.True(t, rw.TryLock())
	assert.False(t, (*rwlock.Admitted)(&rw).TryLock(), "a reader's token was left over")
}
