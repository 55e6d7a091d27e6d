//go:build !syncwatch_off

package lockorder

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/internal/graph"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// dotEdge is what WriteDOT needs of an order edge, copied under eng.mu.
type dotEdge struct {
	from, to string
	stack    stack.ID
	first    time.Time
	label    string
	cycle    bool
}

// WriteDOT writes the lock-order graph in Graphviz's DOT language, for
// dot -Tsvg and other Graphviz tools. It is safe to call at any time, from
// any goroutine; it returns w's error, if any.
//
// Nodes are the graph's nodes, named by their names: lock classes, or lock
// instances where two locks of one class were taken together ("store#1",
// "store#2"). An edge A -> B says B was acquired while A was held, for
// reading or for writing (the graph keeps the two apart; the drawing has
// one edge); its label is the place where that was seen (as reports
// show it: the first sighting, or the one that made the edge able to
// block), as
// "function file:line" (the package path and directory left out). Edges of
// the cycles reported so far (the lock-order-cycle violations of
// [Violations]) are drawn in red, with pen width 2. The graph is what ModeCheck has recorded since the program
// started or [Reset] was called; nodes and edges are sorted by name, so the
// output depends only on the graph.
func WriteDOT(w io.Writer) error {
	// Read the reported cycles before taking eng.mu: the report store has
	// its own lock, and the two are never held together.
	onCycle := map[[2]string]bool{}
	for _, v := range Violations() {
		if v.Kind == KindCycle {
			for _, e := range v.Cycle {
				onCycle[[2]string{e.From, e.To}] = true
			}
		}
	}
	var (
		nodes []string
		edges []dotEdge
	)
	eng.mu.Lock()
	for _, n := range eng.nodes {
		nodes = append(nodes, n.ref().Name)
	}
	eng.graph.Each(func(e *graph.Edge) {
		edges = append(edges, dotEdge{from: dotName(e.From), to: dotName(e.To), stack: stack.ID(e.First.Stack), first: e.First.Time})
	})
	eng.mu.Unlock()

	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	// A -> B for reading and for writing are one edge drawn, labeled with
	// the earlier of their shown sightings.
	slices.SortFunc(edges, func(a, b dotEdge) int {
		return cmp.Or(strings.Compare(a.from, b.from), strings.Compare(a.to, b.to), a.first.Compare(b.first), cmp.Compare(a.stack, b.stack))
	})
	edges = slices.CompactFunc(edges, func(a, b dotEdge) bool { return a.from == b.from && a.to == b.to })
	for i := range edges {
		e := &edges[i]
		e.cycle = onCycle[[2]string{e.from, e.to}]
		if f := stack.Top(e.stack); f.Function != "" {
			e.label = fmt.Sprintf("%s %s:%d", path.Base(f.Function), filepath.Base(f.File), f.Line)
		}
	}

	bw := bufio.NewWriter(w)
	bw.WriteString("digraph lockorder {\n\tnode [shape=box];\n")
	for _, n := range nodes {
		fmt.Fprintf(bw, "\t%s;\n", dotQuote(n))
	}
	for _, e := range edges {
		fmt.Fprintf(bw, "\t%s -> %s [label=%s", dotQuote(e.from), dotQuote(e.to), dotQuote(e.label))
		if e.cycle {
			bw.WriteString(", color=red, penwidth=2")
		}
		bw.WriteString("];\n")
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// dotName returns the name of node id. Called with eng.mu held.
func dotName(id graph.NodeID) string {
	if n, ok := eng.nodes[id]; ok {
		return n.ref().Name
	}
	if n := eng.graph.Lookup(id); n != nil {
		return n.Name
	}
	return fmt.Sprintf("node%d", uint64(id))
}

var dotEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// dotQuote returns s as a DOT string literal.
func dotQuote(s string) string { return `"` + dotEscaper.Replace(s) + `"` }
