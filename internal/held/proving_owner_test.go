package held_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/held"
)

// Past the bound, a goroutine's acquisition is taken for a nesting (its
// edges added as though proved) only while the goroutine holds its lock
// as its own. One whose hold was handed off to another goroutine (seen at
// Prune), or whose entry has left the stack some other way (a wait that
// returned), is a section ended under the holds: its edges are dropped.
func TestProvingPastTheBoundTakesForANestingOnlyAHoldStillOwn(t *testing.T) {
	const me = 7
	for _, tc := range []struct {
		name   string
		end    func(g *held.G, l *class.Lock)
		nested bool
	}{
		{"held", func(*held.G, *class.Lock) {}, true},
		{"handed off, pruned", func(g *held.G, l *class.Lock) {
			l.ClearHolder() // released by another goroutine
			if !g.Prune() {
				t.Fatal("the hold handed off is pruned")
			}
		}, false},
		{"entry gone", func(g *held.G, l *class.Lock) { g.Remove(g.Find(l)) }, false},
		{"taken again after a hand-off", func(g *held.G, l *class.Lock) {
			l.ClearHolder()
			g.Prune()
			l.SetHolder(me) // a new hold, under the same holds
			g.Push(held.Entry{Lock: l})
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := held.New(me, false)
			hold := newLocks(t, 1)
			holds := make([]*class.Lock, 8)
			for i := range holds {
				holds[i] = hold()
				g.Push(held.Entry{Lock: holds[i]})
			}
			heldBy(me, holds...)
			next := newLocks(t, 100)
			first := next()
			g.HoldEdges(edgesOf(1, first, holds...), 0)
			first.SetHolder(me)
			g.Push(held.Entry{Lock: first})
			tc.end(g, first)
			var out [][]held.Edge
			for k := 2; len(out) == 0 && g.WaitsOnKey(1); k++ {
				out, _ = g.HoldEdges(edgesOf(chain.Key(k), next(), holds...), 0)
			}
			if got := len(out) == 1 && out[0][0].Key == 1; got != tc.nested {
				t.Fatalf("pushed out, the first acquisition's edges added: %v, want %v", got, tc.nested)
			}
			if got := len(g.GivenUp()) == 1; got == tc.nested {
				t.Fatalf("its chain given up: %v, want %v", got, !tc.nested)
			}
		})
	}
}

// Prune after a lock-all of thousands, edges waiting into each lock, was
// handed off whole to another goroutine to release: it tells Proving of
// each section's end in one pass over the stack, not one per entry
// dropped (quadratic: 2,000 entries cost ~40x more).
func BenchmarkPruneAfterADeepHandOff(b *testing.B) {
	const me, n = 7, 2000
	kept := newLocks(b, 1)()
	kept.SetHolder(me)
	next := newLocks(b, 100)
	locks := make([]*class.Lock, n)
	for i := range locks {
		locks[i] = next()
	}
	for b.Loop() {
		b.StopTimer()
		g := held.New(me, false)
		g.Push(held.Entry{Lock: kept})
		for i, l := range locks {
			g.HoldEdges(edgesOf(chain.Key(i+1), l, kept), 0)
			l.SetHolder(me)
			g.Push(held.Entry{Lock: l})
		}
		for _, l := range locks {
			l.ClearHolder() // handed off
		}
		b.StartTimer()
		g.Prune()
	}
}
