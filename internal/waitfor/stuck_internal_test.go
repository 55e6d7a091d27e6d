package waitfor

import (
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/kind"
)

// W3: a wait counts from the last progress the monitor saw. A WaitGroup
// whose tasks are being counted done is moving, however long its Wait
// lasts; one whose counter stopped is stuck from the last Done. A wait
// that shows no progress (a Once) counts from its start.
func TestAWaitCountsFromTheLastProgress(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	for _, c := range []struct {
		name     string
		kind     string
		lk       kind.Kind
		holder   bool
		progress func(*class.Lock)
		moving   bool
	}{
		{"waitgroup", KindWaitGroup, kind.WaitGroup, false, (*class.Lock).Progress, true},
		{"lock", KindLock, kind.Mutex, true, func(l *class.Lock) { l.SetHolder(7) }, true},
		{"untracked lock", KindLock, kind.Mutex, false, func(l *class.Lock) { l.SetHolder(7) }, false},
		{"once", KindOnce, kind.Once, false, (*class.Lock).Progress, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := class.New(nil, c.lk, 1)
			w := &Wait{Kind: c.kind, Lock: l, HolderKnown: c.holder, start: ms(1000)}
			if got := w.stuckFor(ms(1100)); got != 100*time.Millisecond {
				t.Fatalf("before any progress: stuck for %v, want 100ms", got)
			}
			c.progress(l)
			want := 500 * time.Millisecond
			if c.moving {
				want = 0 // the monitor saw it move at 1500
			}
			if got := w.stuckFor(ms(1500)); got != want {
				t.Errorf("at the look after progress: stuck for %v, want %v", got, want)
			}
			if c.moving {
				want = 300 * time.Millisecond
			} else {
				want = 800 * time.Millisecond
			}
			if got := w.stuckFor(ms(1800)); got != want {
				t.Errorf("with no progress since: stuck for %v, want %v", got, want)
			}
		})
	}
}
