package waitfor

import (
	"sync/atomic"
	"time"
)

// A Tally follows waits until they end: how many are still under way,
// and how long the longest that ended lasted. A wait is followed by one
// Tally at most. Its zero value is ready to use.
type Tally struct {
	pending  atomic.Int64
	followed atomic.Int64
	longest  atomic.Int64 // nanoseconds
}

// Follow adds w to t. Following a wait that has ended already counts it
// as ended; following one another Tally follows does nothing.
func (t *Tally) Follow(w *Wait) {
	t.pending.Add(1)
	if !w.tally.CompareAndSwap(nil, t) {
		t.pending.Add(-1)
		return
	}
	t.followed.Add(1)
	if _, over := w.Ended(); over && w.tally.CompareAndSwap(t, nil) {
		t.done(w) // it ended before End could see t
	}
}

// done counts w, which has ended, as ended.
func (t *Tally) done(w *Wait) {
	d, _ := w.Ended()
	for {
		old := t.longest.Load()
		if int64(d) <= old || t.longest.CompareAndSwap(old, int64(d)) {
			break
		}
	}
	t.pending.Add(-1)
}

// Ended returns how long the longest wait t followed lasted, and whether
// t followed any and all have ended.
func (t *Tally) Ended() (time.Duration, bool) {
	if t.pending.Load() != 0 || t.followed.Load() == 0 {
		return 0, false
	}
	return time.Duration(t.longest.Load()), true
}

// Followed returns how many waits t has followed.
func (t *Tally) Followed() int64 { return t.followed.Load() }
