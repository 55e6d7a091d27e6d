package held_test

import (
	"math/rand/v2"
	"runtime"
	"slices"

	"github.com/syncwatch/syncwatch/internal/chain"
	"testing"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/kind"
)

// Second review of R23 (commit 92691e9): what it found, kept.

// Once Released has dropped an edge of an acquisition (its hold moved),
// the acquisition no longer stands for its chain: seen again, the chain
// must be recorded again, or the dropped edge, now under a hold of the
// goroutine's own, is never recorded. ProvingKey still answers true from
// the edges left (b -> c).
func TestProvingKeyAfterAPartialDrop(t *testing.T) {
	var p held.Proving
	a, b, c := class.New(nil, kind.Mutex, 1), class.New(nil, kind.Mutex, 2), class.New(nil, kind.Mutex, 3)
	heldBy(7, a, b)
	p.HoldEdges(edgesOf(10, c, a, b), 0)
	a.ClearHolder() // handed off
	a.SetHolder(7)  // taken again by the goroutine
	p.Released(a, 0)
	if len(p.TakeProved()) != 0 || !p.DroppedKey(10) {
		t.Fatal("a -> c should be dropped")
	}
	a.SetHolder(7) // taken again: chain 10 seen anew under a hold of its own
	if p.ProvingKey(10, 0) {
		t.Fatal("chain 10 lost a -> c: it must be recorded again, not skipped as waiting")
	}
}

// A leak: an acquisition taken out past MaxProving (HoldEdges) is retired
// but not counted as ended, so nothing compacts byFrom: every lock held
// once and never released by the goroutine itself (a per-request lock
// handed to another goroutine to unlock) keeps an entry in byFrom, with
// its retired acquisition, for as long as the goroutine lives.
func TestByFromGrowsWithHandedOffLocks(t *testing.T) {
	var p held.Proving
	to := class.New(nil, kind.Mutex, 1)
	heldBy(7, to)
	heap := func() int64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	round := func(n int) {
		for i := range n {
			l := class.New(nil, kind.Mutex, uintptr(i+2))
			heldBy(7, l)
			p.HoldEdges(edgesOf(chain.Key(i+100), to, l), 0)
			l.ClearHolder() // another goroutine unlocks it
		}
	}
	round(10_000) // past MaxProving: the steady state
	before := heap()
	round(200_000)
	grown := heap() - before
	t.Logf("heap grown by %d KiB over 200k handed-off locks; %d edges wait", grown>>10, p.ProvingEdges())
	if grown > 4<<20 {
		t.Fatalf("Proving grew by %d KiB: bounded by MaxProving, it should not grow", grown>>10)
	}
	runtime.KeepAlive(&p)
}

// A model of Proving as its comment describes it, driven at random
// against the real one: the edges waiting, the keys waiting, the edges
// proved by each release and those returned past the bound must agree.
func TestProvingAgainstAModel(t *testing.T) {
	type medge struct {
		from  *class.Lock
		moves uint64
		epoch uint32
		seq   uint32
	}
	type macq struct {
		key   chain.Key
		epoch uint32
		edges []medge
		lost  bool // an edge was dropped unproved
	}
	for seed := range int64(60) {
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		nLocks := []int{4, 12, 200}[seed%3]
		nKeys := []int{5, 40, 2000}[(seed/3)%3]
		locks := make([]*class.Lock, nLocks)
		for i := range locks {
			locks[i] = class.New(nil, kind.Mutex, uintptr(i+10))
			locks[i].SetHolder(7)
		}
		to := class.New(nil, kind.Mutex, 1)
		var p held.Proving
		var model []*macq
		var seq uint32
		var epoch uint32
		proved := map[uint32]bool{}
		total := func() (n int) {
			for _, a := range model {
				n += len(a.edges)
			}
			return n
		}
		find := func(k chain.Key) int {
			return slices.IndexFunc(model, func(a *macq) bool { return a.key == k })
		}
		live := func(e medge) bool { return e.from.Moves() == e.moves }
		seqs := func(es []held.Edge) []uint32 {
			var s []uint32
			for _, e := range es {
				s = append(s, e.Obs.Stack)
			}
			slices.Sort(s)
			return s
		}
		for step := range 20000 {
			switch r := rng.IntN(100); {
			case r < 45: // an acquisition
				key := chain.Key(rng.IntN(nKeys) + 1)
				n := 1 + rng.IntN(4)
				if rng.IntN(200) == 0 {
					n = held.MaxProvingAt - 2 + rng.IntN(5)
				}
				n = min(n, nLocks)
				perm := rng.Perm(nLocks)[:n]
				es := make([]held.Edge, n)
				me := make([]medge, n)
				for i, j := range perm {
					seq++
					es[i] = held.NewEdge(locks[j], to, graph.Observation{Stack: seq}, epoch)
					es[i].Key = key
					me[i] = medge{locks[j], locks[j].Moves(), epoch, seq}
				}
				if i := find(key); i >= 0 {
					model = slices.Delete(model, i, i+1)
				}
				var want []held.Edge
				wantOK := n <= held.MaxProvingAt
				if wantOK {
					for len(model) > 0 && total()+n > held.MaxProving {
						old := model[0]
						model = model[1:]
						for _, e := range old.edges {
							if e.epoch == epoch && live(e) {
								want = append(want, held.Edge{Obs: graph.Observation{Stack: e.seq}})
							}
						}
					}
					model = append(model, &macq{key: key, epoch: epoch, edges: me})
				}
				out, ok := p.HoldEdges(es, epoch)
				if ok != wantOK {
					t.Fatalf("seed %d step %d: HoldEdges ok %v, want %v", seed, step, ok, wantOK)
				}
				var got []held.Edge
				for _, o := range out {
					got = append(got, o...)
				}
				if !slices.Equal(seqs(got), seqs(want)) {
					t.Fatalf("seed %d step %d: out %v, want %v", seed, step, seqs(got), seqs(want))
				}
				for _, e := range got {
					if proved[e.Obs.Stack] {
						t.Fatalf("seed %d step %d: edge %d out twice", seed, step, e.Obs.Stack)
					}
					proved[e.Obs.Stack] = true
				}
			case r < 85: // the goroutine's own release
				l := locks[rng.IntN(nLocks)]
				var want []uint32
				for i := 0; i < len(model); i++ {
					a := model[i]
					a.edges = slices.DeleteFunc(a.edges, func(e medge) bool {
						if e.from != l {
							return false
						}
						if e.epoch == epoch && live(e) {
							want = append(want, e.seq)
						} else {
							a.lost = true
						}
						return true
					})
					if len(a.edges) == 0 {
						model = slices.Delete(model, i, i+1)
						i--
					}
				}
				if p.HasProving() {
					p.Released(l, epoch)
				}
				got := p.TakeProved()
				for _, e := range got {
					if e.FromID() != l.ID {
						t.Fatalf("seed %d step %d: proved an edge of %d releasing %d", seed, step, e.FromID(), l.ID)
					}
					if e.Moves() != l.Moves() {
						t.Fatalf("seed %d step %d: proved an edge whose hold moved", seed, step)
					}
					if proved[e.Obs.Stack] {
						t.Fatalf("seed %d step %d: edge %d proved twice", seed, step, e.Obs.Stack)
					}
					proved[e.Obs.Stack] = true
				}
				slices.Sort(want)
				if gs := seqs(got); !slices.Equal(gs, want) {
					t.Fatalf("seed %d step %d: proved %v, want %v", seed, step, gs, want)
				}
				p.DoneProved()
				l.SetHolder(7) // taken again
			case r < 97: // a hand-off: another goroutine unlocks, the goroutine takes it again
				l := locks[rng.IntN(nLocks)]
				l.ClearHolder()
				l.SetHolder(7)
			default:
				if rng.IntN(10) == 0 {
					epoch++ // a Reset
				}
			}
			if n := p.ProvingEdges(); n != total() || n < 0 || n > held.MaxProving || p.HasProving() != (n > 0) {
				t.Fatalf("seed %d step %d: %d edges wait, want %d", seed, step, n, total())
			}
			for range 3 {
				k := chain.Key(rng.IntN(nKeys) + 1)
				i := find(k)
				if p.WaitsOnKey(k) != (i >= 0) {
					t.Fatalf("seed %d step %d: WaitsOnKey(%d) %v", seed, step, k, !(i >= 0))
				}
				want := i >= 0 && model[i].epoch == epoch && !model[i].lost && !slices.ContainsFunc(model[i].edges, func(e medge) bool { return !live(e) })
				if p.ProvingKey(k, epoch) != want {
					t.Fatalf("seed %d step %d: ProvingKey(%d) %v", seed, step, k, !want)
				}
			}
		}
	}
}
