//go:build !syncwatch_off

package lockorder

import (
	"fmt"
	"sync"
	"time"

	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// A long-wait is a guess (RULES.md W6), and so is a deadlock on
// inconclusive evidence (W1): the waits it was reported for are followed, and once every one of them has ended the record says so and
// is marked Expected (slow, not stuck), so that lockordertest shows it
// without failing. A record past maxSlowKeys is not followed and stays as
// it is.
const maxSlowKeys = 1024

// slowWaits maps a long-wait record's Key to the tally of the waits
// reported under it.
var slowWaits struct {
	mu sync.Mutex
	m  map[string]*waitfor.Tally
}

// noteSlowWait records that w was reported as a long-wait under key.
func noteSlowWait(key string, w *waitfor.Wait) {
	slowWaits.mu.Lock()
	t := slowWaits.m[key]
	if t == nil && len(slowWaits.m) < maxSlowKeys {
		if slowWaits.m == nil {
			slowWaits.m = make(map[string]*waitfor.Tally)
		}
		t = new(waitfor.Tally)
		slowWaits.m[key] = t
	}
	slowWaits.mu.Unlock()
	if t != nil {
		t.Follow(w)
	}
}

// followAs makes the record under key follow the waits the record under
// as follows, with the same tally: an order a deadlock on evidence added
// ends as a guess when the deadlock's waits do.
func followAs(key, as string) {
	slowWaits.mu.Lock()
	if t := slowWaits.m[as]; t != nil && len(slowWaits.m) < maxSlowKeys {
		slowWaits.m[key] = t
	}
	slowWaits.mu.Unlock()
}

// slowWaitEnded returns how long the longest wait reported under key
// lasted, and whether every one of them has ended.
func slowWaitEnded(key string) (time.Duration, bool) {
	slowWaits.mu.Lock()
	t := slowWaits.m[key]
	slowWaits.mu.Unlock()
	if t == nil {
		return 0, false
	}
	return t.Ended()
}

// forgetSlowWaits drops every followed wait (Reset).
func forgetSlowWaits() {
	slowWaits.mu.Lock()
	slowWaits.m = nil
	slowWaits.mu.Unlock()
}

// markEnded marks v, a recorded long-wait, or a deadlock or held-by-exited
// report on inconclusive evidence (RULES.md W1), whose waits have all
// ended, Expected, and says how long they lasted.
func markEnded(v *Violation) {
	switch {
	case v.Expected:
		return
	case v.Kind == KindLongWait, v.Kind == KindDeadlock, v.Kind == KindRecursiveLock, v.Kind == KindHeldByExited, v.Kind == KindCycle:
	default:
		return
	}
	d, over := slowWaitEnded(v.Key) // only guesses are followed
	if !over {
		return
	}
	v.Expected = true
	v.Waited = max(v.Waited, d) // d is 0 if every wait ended before it was followed
	if v.Kind == KindCycle {
		v.Detail += fmt.Sprintf("\nThe waits of the deadlock that added this order have since ended, after %v or more: a hold of the cycle was handed off, not its goroutine's own; not an order.", v.Waited.Round(time.Millisecond))
		return
	}
	if v.Kind == KindLongWait {
		v.Detail += fmt.Sprintf("\nThe wait has since ended, after %v or more: slow, not stuck.", v.Waited.Round(time.Millisecond))
		return
	}
	v.Detail += fmt.Sprintf("\nThe waits have since ended, after %v or more: something the evidence could not see (a timer, a deadline, outside input) ended them; not a deadlock.", v.Waited.Round(time.Millisecond))
}
