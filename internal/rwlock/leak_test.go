package rwlock_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/internal/leak"
	"github.com/syncwatch/syncwatch/internal/rwlock"
)

// A writer blocked for good on the writers' queue, of a lock that only
// blocked goroutines can reach, is found by the runtime's goroutine-leak
// detection, as one blocked in a sync.Mutex is: its wait is reachable
// only through the lock. (The goroutine stays blocked: a goroutine found
// leaked must never be woken.)
func TestWriterBlockedForGoodIsLeaked(t *testing.T) {
	if !leak.Supported() {
		t.Skip("this runtime has no goroutine-leak detection")
	}
	waiting := make(chan struct{})
	go func() {
		rw := new(rwlock.RWMutex)
		rw.Lock()
		go func() {
			close(waiting)
			rw.Lock() // the holder is gone: blocked for good
		}()
	}()
	<-waiting
	assert.True(t, writerLeaked(), "the writer is not found blocked for good")
}

// writerLeaked runs detections until a goroutine in RWMutex.Lock is
// marked leaked, or one that was already parked before a detection is
// still not marked after it.
func writerLeaked() bool {
	wasParked := false
	for range 100 {
		leak.Detect()
		leaked, parked := scanWriter()
		if leaked {
			return true
		}
		if wasParked {
			return false
		}
		wasParked = parked
		runtime.Gosched()
	}
	return false
}

// scanWriter reports whether the goroutine in RWMutex.Lock is marked
// leaked, and whether it is parked on a channel.
func scanWriter() (leaked, parked bool) {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		if !strings.Contains(g, "rwlock.(*RWMutex).Lock") {
			continue
		}
		_, state, _ := strings.Cut(g, "[")
		state, _, _ = strings.Cut(state, "]")
		if state, leaked = leak.Marked(state); leaked {
			return true, true
		}
		parked = parked || state == "select" || state == "chan receive"
	}
	return false, parked
}
