package watchdog

import (
	"fmt"
	"os"
	"time"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/mono"
)

// look is what one look at a loop shows.
type look struct {
	// steps is the loop's Step count, read before its latest Step: the
	// episode a stall belongs to.
	steps   uint64
	pending int
	// since is the mono reading the stall clock runs from: the latest
	// Step, or when work last became pending if that is later. 0 while
	// nothing is pending.
	since   int64
	stalled bool
}

// look evaluates the loop at the mono reading now. It calls the pending
// function with no lock held.
func (l *Loop) look(now int64) look {
	fn := 0
	if l.cfg.pending != nil {
		fn = max(l.cfg.pending(), 0)
	}
	// steps is read before lastStep: a Step between the two reads can
	// only delay a report (the stall is seen in the Step's episode at the
	// next look), never file it under an episode that has not begun.
	steps := l.steps.Load()
	count, began, last := l.count.Load(), l.began.Load(), l.lastStep.Load()
	l.mu.Lock()
	switch {
	case fn == 0:
		l.fnSince = 0
	case l.fnSince == 0:
		// The function cannot say since when its work is pending: it is
		// since this look, at the latest.
		l.fnSince = now
	}
	fnSince := l.fnSince
	l.mu.Unlock()

	lk := look{steps: steps, pending: int(count) + fn}
	if lk.pending <= 0 {
		return look{}
	}
	var work int64 // when work last became pending
	if count > 0 {
		work = began
	}
	if fn > 0 && (work == 0 || fnSince < work) {
		work = fnSince
	}
	lk.since = max(last, work)
	lk.stalled = time.Duration(now-lk.since) > l.cfg.bound
	return lk
}

// tick is the timer's look at the loop; it schedules the next one.
func (l *Loop) tick() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.checking = goid.ID()
	l.mu.Unlock()

	l.check()

	l.mu.Lock()
	l.checking = 0
	if !l.closed {
		l.timer.Reset(l.every)
	}
	l.idle.Broadcast()
	l.mu.Unlock()
}

// check reports a stall the first time a look shows it: once per
// episode, an episode ending only with the next Step. Work that is done
// and comes back while the loop does not step is the same episode: the
// loop has still not stepped.
func (l *Loop) check() {
	lk := l.look(mono.Now())
	if !lk.stalled {
		return
	}
	l.mu.Lock()
	fresh := l.reported != lk.steps+1
	if fresh {
		l.reported = lk.steps + 1
		l.episodes++
	}
	episode := l.episodes
	l.mu.Unlock()
	if fresh {
		l.reportStall(lk, episode)
	}
}

// reportStall reports a stall from the timer's goroutine, which has no
// caller for a violation handler's panic to reach: the panic is printed
// and the watching goes on.
func (l *Loop) reportStall(lk look, episode uint64) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "watchdog: the violation handler panicked on a stalled report of loop %q: %v\n", l.name, p)
		}
	}()
	l.tel.stalled()
	report(l, l.stall(lk, newScene()), episode)
}
