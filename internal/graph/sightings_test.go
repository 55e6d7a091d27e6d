package graph_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/syncwatch/syncwatch/internal/graph"
)

// TestSightingsBruteForce: a closed walk of *sightings* (each with its own
// gate, modes and FromLock) that can deadlock by the walker's rules must
// have been reported by some Add by the time its last sighting is added.
// It checks the graph against the raw sightings, not against its own
// merged edges.
func TestSightingsBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	const nodes, maxLen = 4, 5
	subset := func(not ...graph.NodeID) graph.Gate { return randomGate(rng, not...) }
	missed, hits, nonSimple := 0, 0, 0
	for iter := range 20000 {
		var log []string
		logf := func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }
		var g graph.Graph
		writers := map[graph.NodeID]graph.Gate{}
		written := map[graph.NodeID]bool{}
		for id := graph.NodeID(1); id <= nodes; id++ {
			g.Node(id, "")
			if rng.IntN(2) == 0 {
				writers[id] = subset(id)
				g.SetWritersGate(id, writers[id])
			}
			written[id] = rng.IntN(4) > 0
		}
		canBlock := func(e *graph.Edge) bool { return e.ToWrite || written[e.To] }
		w := walker{out: map[graph.NodeID][]*graph.Edge{}, writers: writers, canBlock: canBlock}
		reported := false
		pairs := [][2]graph.NodeID{}
		for range 3 + rng.IntN(3) {
			pairs = append(pairs, [2]graph.NodeID{graph.NodeID(1 + rng.IntN(nodes)), graph.NodeID(1 + rng.IntN(nodes))})
		}
		for range 4 + rng.IntN(8) {
			switch rng.IntN(6) {
			case 0: // a write of y under fewer locks: its gate narrows
				y := graph.NodeID(1 + rng.IntN(nodes))
				if wg, ok := writers[y]; ok && wg.Len() > 0 {
					ids := wg.IDs()
					logf("narrow %d", y)
					writers[y] = graph.NewGate(ids[:rng.IntN(len(ids))])
					g.SetWritersGate(y, writers[y])
					for _, e := range g.In(y) {
						if !e.ToWrite && g.Recheck(e, canBlock) != nil {
							reported = true
						}
					}
				}
			case 2: // a node dies
				if rng.IntN(3) == 0 {
					y := graph.NodeID(1 + rng.IntN(nodes))
					g.Remove(y)
					logf("remove %d", y)
					delete(w.out, y)
					for k, es := range w.out {
						w.out[k] = slices.DeleteFunc(es, func(e *graph.Edge) bool { return e.To == y })
					}
					g.Node(y, "")
					if wg, ok := writers[y]; ok {
						g.SetWritersGate(y, wg)
					}
					reported = false
					g.Each(func(e *graph.Edge) {
						if g.Recheck(e, canBlock) != nil {
							reported = true
						}
					})
				}
			case 1: // first write of y
				y := graph.NodeID(1 + rng.IntN(nodes))
				if !written[y] {
					written[y] = true
					logf("written %d", y)
					for _, e := range g.In(y) {
						if g.Recheck(e, canBlock) != nil {
							reported = true
						}
					}
				}
			}
			p := pairs[rng.IntN(len(pairs))]
			from, to := p[0], p[1]
			if from == to {
				continue
			}
			o := graph.Observation{Gate: subset(from, to), FromRead: rng.IntN(3) == 0, ToRead: rng.IntN(2) == 0}
			if rng.IntN(3) == 0 {
				o.RGate = subset(from, to)
			}
			switch rng.IntN(4) {
			case 0, 1:
				o.FromLock = from
			case 2:
				o.FromLock = 12
			}
			_, _, c := g.Add(from, to, o, canBlock)
			logf("add %d->%d gate %v fromRead %v toRead %v fromLock %d => %v", from, to, o.Gate.IDs(), o.FromRead, o.ToRead, o.FromLock, ids(c))
			if c != nil {
				reported = true
			}
			s := &graph.Edge{From: from, To: to, Gate: o.Gate, ToWrite: !o.ToRead, FromWrite: !o.FromRead, Hold: o.FromLock, RGate: o.RGate}
			if !o.FromRead {
				s.Src = o.FromLock
			}
			w.out[from] = append(w.out[from], s)
			found := graph.Cycle(nil)
			for _, ss := range w.all() {
				if _, f := w.shortest(ss, maxLen); f != nil {
					found = f
					break
				}
			}
			if found != nil && !simple(found) {
				nonSimple++
				found = nil
				for _, ss := range w.all() {
					w.walksSimple(ss, maxLen, func(c graph.Cycle) {
						if found == nil && w.deadlocks(c, true) {
							found = slices.Clone(c)
						}
					})
				}
			}
			if found != nil {
				hits++
				if !reported {
					missed++
					if missed < 5 {
						t.Errorf("iter %d: sighting walk %v can deadlock, nothing reported\nwriters %v written %v\n%s", iter, ids(found), writers, written, strings.Join(log, "\n"))
					}
				}
			}
		}
	}
	t.Logf("deadlocking sighting walks %d, missed %d, shortest not simple %d", hits, missed, nonSimple)
}

func (w *walker) all() []*graph.Edge {
	var out []*graph.Edge
	for _, es := range w.out {
		out = append(out, es...)
	}
	return out
}

func simple(c graph.Cycle) bool {
	seen := map[graph.NodeID]bool{}
	for _, e := range c {
		if seen[e.From] {
			return false
		}
		seen[e.From] = true
	}
	return true
}

func (w *walker) walksSimple(e *graph.Edge, max int, f func(graph.Cycle)) {
	for n := 1; n <= max; n++ {
		w.walks(graph.Cycle{e}, n, func(c graph.Cycle) {
			if simple(c) {
				f(c)
			}
		})
	}
}
