//go:build !syncwatch_off

package debughttp_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/debughttp"
)

func TestParseDOTReadsWriteDOT(t *testing.T) {
	a, b := lockorder.NewMutex(`dot "a"`), lockorder.NewMutex(`dot\b`)
	a.Lock()
	b.Lock()
	b.Unlock()
	a.Unlock()
	var buf bytes.Buffer
	require.NoError(t, lockorder.WriteDOT(&buf))
	g := debughttp.ParseDOT(buf.String())
	assert.Contains(t, g.Nodes, `dot "a"`)
	assert.Contains(t, g.Nodes, `dot\b`)
	var e *debughttp.GraphEdge
	for i := range g.Edges {
		if g.Edges[i].From == `dot "a"` {
			e = &g.Edges[i]
		}
	}
	require.NotNil(t, e)
	assert.Equal(t, `dot\b`, e.To)
	assert.Contains(t, e.Where, "graph_test.go:")
	assert.False(t, e.Cycle)
}

func TestParseDOT(t *testing.T) {
	g := debughttp.ParseDOT("digraph lockorder {\n\tnode [shape=box];\n\t\"a\";\n\t\"b\\nc\";\n" +
		"\t\"a\" -> \"b\\nc\" [label=\"main.f x.go:1\", color=red, penwidth=2];\n\t\"b\\nc\" -> \"a\" [label=\"\"];\n}\n")
	assert.Equal(t, []string{"a", "b\nc"}, g.Nodes)
	assert.Equal(t, []debughttp.GraphEdge{
		{From: "a", To: "b\nc", Where: "main.f x.go:1", Cycle: true},
		{From: "b\nc", To: "a"},
	}, g.Edges)
}

// The SVG is well-formed XML, draws every node, and the cycle in red.
func TestRenderSVG(t *testing.T) {
	g := debughttp.Graph{
		Nodes: []string{"agg", "worker", "<odd & name>", "leaf"},
		Edges: []debughttp.GraphEdge{
			{From: "worker", To: "agg", Where: "main.a a.go:1", Cycle: true},
			{From: "agg", To: "worker", Where: "main.b b.go:2", Cycle: true},
			{From: "agg", To: "leaf"},
			{From: "<odd & name>", To: "<odd & name>"},
		},
	}
	svg := string(debughttp.RenderSVG(g))
	dec := xml.NewDecoder(strings.NewReader(svg))
	var texts []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, svg)
		if cd, ok := tok.(xml.CharData); ok && strings.TrimSpace(string(cd)) != "" {
			texts = append(texts, string(cd))
		}
	}
	for _, n := range g.Nodes {
		assert.Contains(t, texts, n)
	}
	assert.Equal(t, 2, strings.Count(svg, `stroke="#d00" stroke-width="2.2"`), "two red edges")
	assert.Equal(t, 2, strings.Count(svg, `fill="#fde8e8" stroke="#d00"`), "two red nodes")
	assert.Equal(t, svg, string(debughttp.RenderSVG(g)), "deterministic")
	assert.Empty(t, debughttp.RenderSVG(debughttp.Graph{}))
}

func TestParseHeld(t *testing.T) {
	h := debughttp.ParseHeld("github.com/syncwatch/syncwatch/lockorder.held profile: total 3\n" +
		"2 @ 0x4f0a45 0x474ac1\n" +
		"#\t0x4f0a44\tmain.worker+0x64\t/src/main.go:12\n" +
		"#\t0x474ac0\truntime.main+0x2a0\t/go/src/runtime/proc.go:283\n\n" +
		"1 @ 0x4f0b00\n" +
		"#\t0x4f0aff\tmain.other+0x10\t/src/other.go:7\n\n")
	assert.Equal(t, 3, h.Total)
	assert.Equal(t, []debughttp.HeldLock{
		{Count: 2, Stack: []string{"main.worker /src/main.go:12", "runtime.main /go/src/runtime/proc.go:283"}},
		{Count: 1, Stack: []string{"main.other /src/other.go:7"}},
	}, h.Locks)
}
