//go:build !syncwatch_off

package lockorder

import (
	"fmt"
	"sync"
	"time"

	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// A long-wait is a guess (RULES.md W6): the waits it was reported for are
// kept, and once every one of them has ended the record says so and is
// marked Expected (slow, not stuck), so that lockordertest shows it
// without failing. A record whose waits are not all known stays as it is.
const (
	maxSlowKeys  = 1024 // long-wait records followed
	maxSlowWaits = 16   // waits followed per record
)

// slowWaits maps a long-wait record's Key to the waits reported under it;
// a nil entry stands for waits that could not be kept (never ended).
var slowWaits struct {
	mu sync.Mutex
	m  map[string][]*waitfor.Wait
}

// noteSlowWait records that w was reported as a long-wait under key.
func noteSlowWait(key string, w *waitfor.Wait) {
	slowWaits.mu.Lock()
	defer slowWaits.mu.Unlock()
	ws, ok := slowWaits.m[key]
	if !ok && len(slowWaits.m) >= maxSlowKeys {
		return // not followed: the record stays failing
	}
	if slowWaits.m == nil {
		slowWaits.m = make(map[string][]*waitfor.Wait)
	}
	if len(ws) >= maxSlowWaits {
		kept := ws[:0]
		for _, x := range ws {
			if _, over := x.Ended(); x == nil || !over {
				kept = append(kept, x)
			}
		}
		ws = kept
	}
	if len(ws) >= maxSlowWaits {
		ws[len(ws)-1] = nil // one too many: never ended
	} else {
		ws = append(ws, w)
	}
	slowWaits.m[key] = ws
}

// slowWaitEnded returns how long the longest wait reported under key
// lasted, and whether every one of them has ended.
func slowWaitEnded(key string) (time.Duration, bool) {
	slowWaits.mu.Lock()
	defer slowWaits.mu.Unlock()
	ws := slowWaits.m[key]
	var longest time.Duration
	for _, w := range ws {
		if w == nil {
			return 0, false
		}
		d, over := w.Ended()
		if !over {
			return 0, false
		}
		longest = max(longest, d)
	}
	return longest, len(ws) > 0
}

// forgetSlowWaits drops every followed wait (Reset).
func forgetSlowWaits() {
	slowWaits.mu.Lock()
	slowWaits.m = nil
	slowWaits.mu.Unlock()
}

// markEnded marks v, a recorded long-wait whose waits have all ended,
// Expected, and says how long they lasted.
func markEnded(v *Violation) {
	if v.Kind != KindLongWait || v.Expected {
		return
	}
	d, over := slowWaitEnded(v.Key)
	if !over {
		return
	}
	v.Expected = true
	v.Waited = max(v.Waited, d)
	v.Detail += fmt.Sprintf("\nThe wait has since ended, after %v: slow, not stuck.", d.Round(time.Millisecond))
}
