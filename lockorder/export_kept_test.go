//go:build !syncwatch_off

package lockorder

import (
	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// UngatedRecords returns how many kept locks R24 recorded for regate.
func UngatedRecords() int {
	eng.mu.Lock()
	defer eng.mu.Unlock()
	return len(eng.ungated)
}

// R24CheckWithHook runs R24's part of the exit check, calling between
// once the kept holds are read (KeptHolds, then ReachableDeadHolds: a
// garbage collection) and before ungateKept takes eng.mu: what another
// goroutine may do in that window. It returns 1000 times the kept holds
// read, plus the cycles reported.
func R24CheckWithHook(between func(kept int)) int {
	n := 0
	_, vs := exitedHolds(gls.States(), waitfor.Fresh().Exited, func(k int) { n = 1000 * k; between(k) })
	for _, v := range vs {
		publish(v)
	}
	return n + len(vs)
}

// UngatedEdgesGone returns how many edges R24's records (eng.ungated)
// still point to that have left the graph, and how many they point to.
func UngatedEdgesGone() (gone, all int) {
	eng.mu.Lock()
	defer eng.mu.Unlock()
	for _, r := range eng.ungated {
		for _, x := range r.edges {
			all++
			if eng.graph.Edge(x.e.From, x.e.To, !x.e.ToWrite) != x.e {
				gone++
			}
		}
	}
	return gone, all
}
