package debughttp

import (
	"bytes"
	"strings"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Limits on the lock-order graph shown: a program with more lock classes
// than this gets the first ones by name, and the page says how many were
// left out.
const (
	maxNodes = 150
	maxEdges = 300
)

// Graph is lockorder's lock-order graph: an edge A -> B says B was taken
// while A was held; edges of a reported lock-order cycle have Cycle set.
type Graph struct {
	Nodes []string    `json:"nodes"`
	Edges []GraphEdge `json:"edges"`
	// Omitted counts the nodes and edges left out past the page's limits.
	Omitted int `json:"omitted,omitempty"`
}

// GraphEdge is one edge of a [Graph].
type GraphEdge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Where string `json:"where,omitempty"` // where it was first seen: "function file:line"
	Cycle bool   `json:"cycle,omitempty"`
}

// lockGraph reads lockorder's graph through WriteDOT, its published form.
func lockGraph() Graph {
	var buf bytes.Buffer
	if err := lockorder.WriteDOT(&buf); err != nil {
		return Graph{}
	}
	g := parseDOT(buf.String())
	if len(g.Nodes) > maxNodes {
		keep := make(map[string]bool, maxNodes)
		for _, n := range g.Nodes[:maxNodes] {
			keep[n] = true
		}
		g.Omitted += len(g.Nodes) - maxNodes
		g.Nodes = g.Nodes[:maxNodes]
		edges := g.Edges[:0]
		for _, e := range g.Edges {
			if keep[e.From] && keep[e.To] {
				edges = append(edges, e)
			} else {
				g.Omitted++
			}
		}
		g.Edges = edges
	}
	if len(g.Edges) > maxEdges {
		g.Omitted += len(g.Edges) - maxEdges
		g.Edges = g.Edges[:maxEdges]
	}
	return g
}

// parseDOT reads the DOT that lockorder.WriteDOT writes: one node
// statement ("name";) or edge statement ("a" -> "b" [label="...",
// color=red, penwidth=2];) a line. Lines of other shapes are skipped.
func parseDOT(dot string) Graph {
	var g Graph
	for line := range strings.Lines(dot) {
		line = strings.TrimSpace(line)
		from, rest, ok := unquote(line)
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		if !strings.HasPrefix(rest, "->") {
			g.Nodes = append(g.Nodes, from)
			continue
		}
		to, rest, ok := unquote(strings.TrimSpace(rest[2:]))
		if !ok {
			continue
		}
		e := GraphEdge{From: from, To: to}
		if i := strings.Index(rest, "label="); i >= 0 {
			e.Where, _, _ = unquote(rest[i+len("label="):])
		}
		e.Cycle = strings.Contains(rest, "color=red")
		g.Edges = append(g.Edges, e)
	}
	return g
}

// unquote reads a DOT string literal at the start of s, and returns it
// and what follows it.
func unquote(s string) (val, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", s, false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
			if i+1 < len(s) {
				i++
				if s[i] == 'n' {
					b.WriteByte('\n')
				} else {
					b.WriteByte(s[i])
				}
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", s, false
}
