package waitfor

import (
	"sync/atomic"
	"time"
)

// A Tally follows waits until they end: how many are still under way,
// and how long the longest that ended lasted. A wait is followed by two
// Tallies at most; a Tally that could not follow one of its waits never
// says they all ended. Its zero value is ready to use.
type Tally struct {
	pending  atomic.Int64
	followed atomic.Int64
	longest  atomic.Int64 // nanoseconds
	missed   atomic.Bool  // a wait could not be followed
}

// ended marks, in Wait.tally, a wait that End was called for.
var ended Tally

// Follow adds w to t. A wait that has ended already counts as ended (for
// how long is not known: its report says how long it had lasted then);
// one t already follows is not added again; one two other Tallies follow
// cannot be followed, and t then never says its waits all ended.
func (t *Tally) Follow(w *Wait) {
	t.pending.Add(1) // before w can be seen followed: never "all ended" early
	for i := range w.tally {
		slot := &w.tally[i]
		if slot.CompareAndSwap(nil, t) {
			t.followed.Add(1)
			return
		}
		switch slot.Load() {
		case &ended: // End swaps every slot: w has ended
			t.followed.Add(1)
			t.pending.Add(-1)
			return
		case t:
			t.pending.Add(-1)
			return
		}
	}
	t.missed.Store(true)
	t.pending.Add(-1)
}

// done counts a wait of t that ended after d as ended.
func (t *Tally) done(d time.Duration) {
	for {
		old := t.longest.Load()
		if int64(d) <= old || t.longest.CompareAndSwap(old, int64(d)) {
			break
		}
	}
	t.pending.Add(-1)
}

// Ended returns how long the longest wait t followed lasted (0 if none
// was seen to end), and whether t followed any, missed none, and all have
// ended.
func (t *Tally) Ended() (time.Duration, bool) {
	if t.pending.Load() != 0 || t.followed.Load() == 0 || t.missed.Load() {
		return 0, false
	}
	return time.Duration(t.longest.Load()), true
}

// Followed returns how many waits t has followed.
func (t *Tally) Followed() int64 { return t.followed.Load() }
