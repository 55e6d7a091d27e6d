package graph_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/internal/graph"
)

// 1->2 and 1->5 both hold lock 4 for writing, so the walk 5->1->2->1->5
// cannot deadlock (the pair rule), and the simple 5->1->5 is gated by 4.
// The two edges share From: the second search must still apply the rule
// to a walk that revisits a node.
func TestPairRuleWalkThroughANodeTwice(t *testing.T) {
	g := new(graph.Graph)
	g.Node(1, "")
	g.SetWritersGate(1, gateOf(4, 5))
	g.Add(5, 1, fromLock(toRead(obs(12)), 5), nil)
	g.Add(1, 2, fromLock(obs(4, 11), 1), nil)
	g.Add(2, 1, fromRead(obs()), nil)
	g.Add(1, 5, fromRead(obs(3, 4)), nil)
	if c := g.Recheck(g.Edge(5, 1, true), nil); c != nil {
		t.Errorf("reported %v, which cannot deadlock", ids(c))
	}
}
