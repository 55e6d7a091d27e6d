package bench_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/lockorder"
)

// The graph-scale case (j): how lockorder's order graph copes with many
// classes and edges, driven through the public API only.
const (
	graphClasses = 10_000
	graphEdges   = 100_000
)

// dag is a random acyclic set of edges between class indexes, each from a
// class earlier in a random topological order to a later one, and a
// closing edge that would make the longest shortest path from the first
// class in that order into a cycle.
type dag struct {
	edges [][2]int // in insertion order
	// close is the closing edge: close[0] is locked first, then close[1].
	close [2]int
	// cycle is the length of the shortest cycle the closing edge makes.
	cycle int
	// taken holds every edge and the closing edge, by class name.
	taken map[[2]string]bool
}

// className is the name of class c's lock class.
func className(c int) string { return fmt.Sprintf("c%d", c) }

// newDAG returns n distinct random edges over classes classes, in random
// order, consistent with one random topological order.
func newDAG(rng *rand.Rand, classes, n int) dag {
	topo := rng.Perm(classes) // topo[k] is the class at position k
	seen := make(map[[2]int]bool, n)
	var d dag
	for len(d.edges) < n {
		i, j := rng.IntN(classes), rng.IntN(classes)
		if i == j {
			continue
		}
		if i > j {
			i, j = j, i
		}
		e := [2]int{topo[i], topo[j]}
		if !seen[e] {
			seen[e] = true
			d.edges = append(d.edges, e)
		}
	}
	// Breadth-first from the first class in the order: the farthest class
	// it reaches, locked before it, closes the longest of the shortest
	// cycles available.
	adj := make(map[int][]int, classes)
	for _, e := range d.edges {
		adj[e[0]] = append(adj[e[0]], e[1])
	}
	src := topo[0]
	dist := map[int]int{src: 0}
	far := src
	for queue := []int{src}; len(queue) > 0; queue = queue[1:] {
		u := queue[0]
		for _, v := range adj[u] {
			if _, ok := dist[v]; !ok {
				dist[v] = dist[u] + 1
				if dist[v] > dist[far] {
					far = v
				}
				queue = append(queue, v)
			}
		}
	}
	d.close = [2]int{far, src}
	d.cycle = dist[far] + 1
	d.taken = make(map[[2]string]bool, len(d.edges)+1)
	for _, e := range d.edges {
		d.taken[[2]string{className(e[0]), className(e[1])}] = true
	}
	d.taken[[2]string{className(far), className(src)}] = true
	return d
}

// checkCycle reports what is wrong with v as the report of the cycle that
// d's closing edge makes, or "" if it is complete: a cycle of the expected
// length whose edges chain, close, and are all edges that were taken.
func checkCycle(v lockorder.Violation, d dag) string {
	closing := [2]string{className(d.close[0]), className(d.close[1])}
	c := v.Cycle
	if len(c) != d.cycle {
		return fmt.Sprintf("cycle of %d edges, want %d", len(c), d.cycle)
	}
	hasClosing := false
	for i, e := range c {
		if next := c[(i+1)%len(c)]; e.To != next.From {
			return fmt.Sprintf("edge %d ends at %s but edge %d starts at %s", i, e.To, (i+1)%len(c), next.From)
		}
		if !d.taken[[2]string{e.From, e.To}] {
			return fmt.Sprintf("edge %s -> %s was never taken", e.From, e.To)
		}
		hasClosing = hasClosing || [2]string{e.From, e.To} == closing
	}
	if !hasClosing {
		return "the closing edge is missing"
	}
	return ""
}

// BenchmarkGraphScale is case (j). An op resets lockorder, takes 100,000
// new order edges between 10,000 classes (lock the earlier class, then the
// later one, unlock both), then takes the closing edge. It reports the
// time per new edge (ns/edge), the time from the closing Lock call to the
// handler receiving the cycle (detect-us, left out if no cycle was ever
// reported), the cycle's length and whether every op reported it complete
// (cycle-ok, 1 or 0). Run it with -benchtime 1x.
func BenchmarkGraphScale(b *testing.B) {
	if !instrumented {
		b.Skip("syncwatch_off: lockorder keeps no graph")
	}
	b.Run("impl=check", func(b *testing.B) {
		lockorder.Reset()
		defer lockorder.Reset()
		useMode(b, lockorder.ModeCheck)
		var (
			mu   sync.Mutex
			seen time.Time
			got  []lockorder.Violation
		)
		lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if v.Kind == lockorder.KindCycle && len(got) == 0 {
				seen = now
			}
			got = append(got, v)
		}))
		defer lockorder.Configure(lockorder.WithHandler(nil))

		mus := make([]*lockorder.Mutex, graphClasses)
		for i := range mus {
			mus[i] = lockorder.NewMutex(className(i))
		}
		d := newDAG(rand.New(rand.NewPCG(1, 2)), graphClasses, graphEdges)
		var insert, detect time.Duration
		detected := 0
		ok := true
		for b.Loop() {
			lockorder.Reset()
			mu.Lock()
			got, seen = got[:0], time.Time{}
			mu.Unlock()

			start := time.Now()
			for _, e := range d.edges {
				lo, hi := mus[e[0]], mus[e[1]]
				lo.Lock()
				hi.Lock()
				hi.Unlock()
				lo.Unlock()
			}
			insert += time.Since(start)

			first, second := mus[d.close[0]], mus[d.close[1]]
			first.Lock()
			start = time.Now()
			second.Lock()
			second.Unlock()
			first.Unlock()

			mu.Lock()
			vs, at := got, seen
			mu.Unlock()
			if !at.IsZero() {
				detect += at.Sub(start)
				detected++
			}
			switch {
			case len(vs) != 1:
				b.Errorf("want one violation, the cycle; got %d", len(vs))
				ok = false
			case vs[0].Kind != lockorder.KindCycle:
				b.Errorf("want a %s, got %s: %s", lockorder.KindCycle, vs[0].Kind, vs[0].Message)
				ok = false
			default:
				if msg := checkCycle(vs[0], d); msg != "" {
					b.Errorf("incomplete cycle: %s\n%s", msg, vs[0].Message)
					ok = false
				}
			}
		}
		cycleOK := 0.0
		if ok {
			cycleOK = 1
		}
		b.ReportMetric(float64(insert.Nanoseconds())/float64(b.N*graphEdges), "ns/edge")
		if detected > 0 {
			b.ReportMetric(float64(detect.Nanoseconds())/float64(detected)/1e3, "detect-us")
		}
		b.ReportMetric(float64(d.cycle), "cycle-len")
		b.ReportMetric(cycleOK, "cycle-ok")
	})
}
