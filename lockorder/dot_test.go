//go:build !syncwatch_off

package lockorder_test

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

func dotOf(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, lockorder.WriteDOT(&buf))
	return buf.String()
}

// dotEdge returns the line of edge from -> to, or "".
func dotEdge(dot, from, to string) string {
	prefix := "\t\"" + from + "\" -> \"" + to + "\" ["
	for line := range strings.Lines(dot) {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}

func TestWriteDOTHighlightsReportedCycles(t *testing.T) {
	fresh(t)
	a, b, c := lockorder.NewMutex("dotA"), lockorder.NewMutex("dotB"), lockorder.NewMutex("dotC")
	run(func() { lockAB(a, b) })
	run(func() { lockAB(a, c) })
	before := dotOf(t)
	assert.NotContains(t, before, "color=red", "no cycle yet")
	run(func() { lockAB(b, a) })
	require.Len(t, only(lockorder.KindCycle), 1)

	dot := dotOf(t)
	assert.Equal(t, dot, dotOf(t), "the output depends only on the graph")
	require.True(t, strings.HasPrefix(dot, "digraph lockorder {\n"), dot)
	assert.True(t, strings.HasSuffix(dot, "}\n"), dot)
	assert.Less(t, strings.Index(dot, "\t\"dotA\";"), strings.Index(dot, "\t\"dotB\";"), "nodes sorted")
	assert.Less(t, strings.Index(dot, "\t\"dotB\";"), strings.Index(dot, "\t\"dotC\";"), "nodes sorted")

	site := regexp.MustCompile(`\[label="lockorder_test\.lockAB cycle_test\.go:\d+"`)
	for _, e := range [][2]string{{"dotA", "dotB"}, {"dotB", "dotA"}, {"dotA", "dotC"}} {
		line := dotEdge(dot, e[0], e[1])
		require.NotEmpty(t, line, "no edge %s -> %s in\n%s", e[0], e[1], dot)
		assert.Regexp(t, site, line, "labeled with the first site")
	}
	assert.Contains(t, dotEdge(dot, "dotA", "dotB"), ", color=red, penwidth=2];")
	assert.Contains(t, dotEdge(dot, "dotB", "dotA"), ", color=red, penwidth=2];")
	assert.NotContains(t, dotEdge(dot, "dotA", "dotC"), "red", "not on a cycle")
	assert.Empty(t, dotEdge(dot, "dotC", "dotA"))
}

func TestWriteDOTNamesInstancesAndQuotes(t *testing.T) {
	fresh(t)
	s1, s2 := lockorder.NewMutex("dot shard"), lockorder.NewMutex("dot shard")
	q := lockorder.NewMutex(`dot "quoted" \ class`)
	run(func() { lockAB(s1, s2) })
	run(func() { lockAB(s1, q) })
	n1, n2 := nameOf(t, s1), nameOf(t, s2)

	dot := dotOf(t)
	assert.NotEmpty(t, dotEdge(dot, n1, n2), "two locks of one class are ordered as instances:\n%s", dot)
	assert.Contains(t, dot, "\t\""+n1+"\";\n")
	assert.Contains(t, dot, `"dot \"quoted\" \\ class"`, "names are escaped for DOT")
}

func TestWriteDOTAfterResetIsEmpty(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("dotReset1"), lockorder.NewMutex("dotReset2")
	run(func() { lockAB(a, b) })
	require.Contains(t, dotOf(t), "dotReset1")
	lockorder.Reset()
	assert.Equal(t, "digraph lockorder {\n\tnode [shape=box];\n}\n", dotOf(t))
}

func TestWriteDOTRendersWithGraphviz(t *testing.T) {
	dotBin, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("Graphviz's dot is not on PATH")
	}
	fresh(t)
	a, b := lockorder.NewMutex("dotSvgA"), lockorder.NewMutex(`dotSvg "B"`)
	run(func() { lockAB(a, b) })
	run(func() { lockAB(b, a) })

	cmd := exec.Command(dotBin, "-Tsvg")
	cmd.Stdin = strings.NewReader(dotOf(t))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "dot: %s", stderr.String())
	assert.Empty(t, stderr.String(), "dot warned")
	assert.Contains(t, string(out), "<svg")
	assert.Contains(t, string(out), "dotSvgA")
	assert.Contains(t, string(out), `stroke="red"`, "the cycle is drawn in red")
}

// The graph keeps A -> B for reading and for writing apart; the drawing
// has one edge, labeled with the sighting seen first.
func TestWriteDOTOneEdgePerPair(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("dotPairA"), lockorder.NewRWMutex("dotPairB")
	run(func() { a.Lock(); b.RLock(); b.RUnlock(); a.Unlock() })
	run(func() { lockAB(a, b) })
	_, edges := lockorder.GraphSize()
	require.Equal(t, 2, edges, "one edge per way of taking dotPairB")
	dot := dotOf(t)
	assert.Equal(t, 1, strings.Count(dot, "\t\"dotPairA\" -> \"dotPairB\" ["), dot)
	assert.Regexp(t, `label="lockorder_test\.TestWriteDOTOneEdgePerPair\.func1 dot_test\.go:\d+"`, dotEdge(dot, "dotPairA", "dotPairB"))
}
