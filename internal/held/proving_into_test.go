package held_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/kind"
)

// Into, called by every contended wait of a goroutine with edges waiting
// (lockorder.beginLockWait), once scanned every edge waiting (review3):
// with a lock kept and 4096 chains under it each contended wait paid
// ~60µs. It now looks at the latest acquisition of the lock waited for
// only. Compare the sub-benchmarks' ns/op: they should be alike.
func BenchmarkIntoWithEdgesIntoOtherLocks(b *testing.B) {
	for _, n := range []int{1, held.MaxProving} {
		b.Run(map[int]string{1: "one-edge", held.MaxProving: "full"}[n], func(b *testing.B) {
			var p held.Proving
			k := class.New(nil, kind.Mutex, 1)
			heldBy(1, k)
			locks := make([]*class.Lock, n) // alive: edges hold them weakly
			for i := range n {
				locks[i] = class.New(nil, kind.Mutex, uintptr(i+2))
				p.HoldEdges(edgesOf(chain.Key(i+1), locks[i], k), 0)
			}
			y := class.New(nil, kind.Mutex, 99999)
			for b.Loop() {
				p.Into(y)
			}
		})
	}
}

// Into returns the standing edges of the latest acquisition of the lock
// waited for, and none of another lock's.
func TestIntoIsTheLatestAcquisitionsStandingEdges(t *testing.T) {
	var p held.Proving
	a, b, y, z := class.New(nil, kind.Mutex, 1), class.New(nil, kind.Mutex, 2), class.New(nil, kind.Mutex, 3), class.New(nil, kind.Mutex, 4)
	heldBy(7, a, b)
	p.HoldEdges(edgesOf(1, z, a), 0)
	p.HoldEdges(edgesOf(2, y, a, b), 0)
	if got := p.Into(y); len(got) != 2 {
		t.Fatalf("Into(y) = %d edges, want a -> y and b -> y", len(got))
	}
	b.ClearHolder() // handed off
	if got := p.Into(y); len(got) != 1 || got[0].FromID() != a.ID {
		t.Fatalf("Into(y) = %v, want a -> y alone: b's hold no longer stands", got)
	}
	if got := p.Into(class.New(nil, kind.Mutex, 5)); got != nil {
		t.Fatalf("Into a lock with no acquisition = %v", got)
	}
}
