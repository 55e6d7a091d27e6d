package debughttp

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"strings"
)

// The drawing's dimensions, in pixels.
const (
	nodeHeight = 26.0
	charWidth  = 7.2 // of the 12px monospace font
	nodePad    = 16.0
	layerGap   = 90.0
	nodeGap    = 40.0
	margin     = 20.0
	curveBend  = 40.0 // how far an edge with a reverse twin, or going back up, bends
	maxLabels  = 24   // edges drawn with their label; past it, labels are tooltips
)

type box struct {
	name       string
	x, y, w    float64 // center x, top y, width
	rank, slot int
	onCycle    bool
}

func (b *box) cx() float64 { return b.x }
func (b *box) cy() float64 { return b.y + nodeHeight/2 }

// renderSVG draws g with a layered layout: the graph's edges go down,
// but for those closing a cycle, which curve back up; nodes and edges on
// a reported cycle are red. It needs no external program. The result is
// markup built from escaped strings.
func renderSVG(g Graph) template.HTML {
	if len(g.Nodes) == 0 {
		return ""
	}
	idx := make(map[string]int, len(g.Nodes))
	boxes := make([]*box, len(g.Nodes))
	for i, n := range g.Nodes {
		idx[n] = i
		boxes[i] = &box{name: n, w: nodePad + charWidth*float64(len([]rune(n)))}
	}
	var edges [][2]int
	for _, e := range g.Edges {
		f, okf := idx[e.From]
		t, okt := idx[e.To]
		if !okf || !okt {
			continue
		}
		edges = append(edges, [2]int{f, t})
		if e.Cycle {
			boxes[f].onCycle, boxes[t].onCycle = true, true
		}
	}
	layout(boxes, edges)

	reverse := map[[2]int]bool{}
	for _, e := range edges {
		reverse[e] = true
	}
	// Edges first, so that nodes are drawn over them; the drawing's
	// extent is known once every label is placed.
	var body strings.Builder
	ext := extent{minX: math.Inf(1), maxX: math.Inf(-1)}
	for _, b := range boxes {
		ext.add(b.x-b.w/2, b.x+b.w/2, b.y+nodeHeight)
	}
	labels := len(g.Edges) <= maxLabels
	for _, e := range g.Edges {
		f, okf := idx[e.From]
		t, okt := idx[e.To]
		if !okf || !okt {
			continue
		}
		drawEdge(&body, &ext, boxes[f], boxes[t], e, reverse[[2]int{t, f}], labels)
	}
	for _, b := range boxes {
		stroke, fill, width := "#333", "#f4f6fa", 1
		if b.onCycle {
			stroke, fill, width = "#d00", "#fde8e8", 2
		}
		fmt.Fprintf(&body, `<g><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" rx="4" fill="%s" stroke="%s" stroke-width="%d"/>`,
			esc(b.name), b.x-b.w/2, b.y, b.w, nodeHeight, fill, stroke, width)
		fmt.Fprintf(&body, `<text x="%.1f" y="%.1f" text-anchor="middle" font-family="monospace" font-size="12">%s</text></g>`,
			b.x, b.y+nodeHeight/2+4, esc(b.name))
	}
	w, h := ext.maxX-ext.minX+2*margin, ext.maxY+margin
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="lock-order graph">`, w, h, w, h)
	s.WriteString(`<defs>` + marker("arrow", "#555") + marker("arrow-red", "#d00") + `</defs>`)
	fmt.Fprintf(&s, `<g transform="translate(%.1f,0)">`, margin-ext.minX)
	s.WriteString(body.String())
	s.WriteString(`</g></svg>`)
	return template.HTML(s.String()) // every string in it went through esc
}

func marker(id, color string) string {
	return fmt.Sprintf(`<marker id="%s" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="%s"/></marker>`, id, color)
}

func esc(s string) string { return html.EscapeString(s) }

// drawEdge draws one edge: a straight line down, or a curve when it goes
// back up, sideways, or has a twin going the other way.
func drawEdge(s *strings.Builder, ext *extent, from, to *box, e GraphEdge, twin, label bool) {
	color, mark, width := "#555", "arrow", 1.2
	if e.Cycle {
		color, mark, width = "#d00", "arrow-red", 2.2
	}
	title := e.From + " -> " + e.To
	if e.Where != "" {
		title += "\nfirst seen at " + e.Where
	}
	fmt.Fprintf(s, `<g><title>%s</title>`, esc(title))
	if from == to { // a lock class taken while an instance of it is held
		x, y := from.x+from.w/2, from.cy()
		ext.add(x, x+36, y)
		fmt.Fprintf(s, `<path d="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="none" stroke="%s" stroke-width="%.1f" marker-end="url(#%s)"/>`,
			x, y-6, x+36, y-30, x+36, y+30, x, y+6, color, width, mark)
		if label && e.Where != "" {
			edgeLabel(s, ext, x+40, y+4, e.Where, "start")
		}
		s.WriteString(`</g>`)
		return
	}
	x1, y1, x2, y2 := from.cx(), from.cy(), to.cx(), to.cy()
	mx, my := (x1+x2)/2, (y1+y2)/2
	if twin || to.rank <= from.rank {
		dx, dy := x2-x1, y2-y1
		n := math.Hypot(dx, dy)
		// Bend to the left of the direction of travel: two edges between
		// the same nodes, going opposite ways, bend apart.
		mx, my = mx+curveBend*dy/n, my-curveBend*dx/n
	}
	ext.add(mx, mx, my)
	sx, sy := clip(from, mx, my)
	ex, ey := clip(to, mx, my)
	fmt.Fprintf(s, `<path d="M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f" fill="none" stroke="%s" stroke-width="%.1f" marker-end="url(#%s)"/>`,
		sx, sy, mx, my, ex, ey, color, width, mark)
	if label && e.Where != "" {
		// The label goes beside the curve's middle, on its outer side.
		lx, ly := 0.25*sx+0.5*mx+0.25*ex, 0.25*sy+0.5*my+0.25*ey
		if mx < (x1+x2)/2 {
			edgeLabel(s, ext, lx-6, ly+4, e.Where, "end")
		} else {
			edgeLabel(s, ext, lx+6, ly+4, e.Where, "start")
		}
	}
	s.WriteString(`</g>`)
}

// labelCharWidth is the width of a character of the 10px label font,
// generously.
const labelCharWidth = 6.0

// extent is the drawing's bounding box, grown as it is drawn.
type extent struct{ minX, maxX, maxY float64 }

func (e *extent) add(x0, x1, y float64) {
	e.minX, e.maxX, e.maxY = min(e.minX, x0), max(e.maxX, x1), max(e.maxY, y)
}

func edgeLabel(s *strings.Builder, ext *extent, x, y float64, text, anchor string) {
	w := labelCharWidth * float64(len([]rune(text)))
	if anchor == "end" {
		ext.add(x-w, x, y)
	} else {
		ext.add(x, x+w, y)
	}
	fmt.Fprintf(s, `<text x="%.1f" y="%.1f" text-anchor="%s" font-family="sans-serif" font-size="10" fill="#444" stroke="#fff" stroke-width="3" paint-order="stroke">%s</text>`,
		x, y, anchor, esc(text))
}

// clip returns where the line from b's center towards (px, py) leaves b.
func clip(b *box, px, py float64) (float64, float64) {
	cx, cy := b.cx(), b.cy()
	dx, dy := px-cx, py-cy
	if dx == 0 && dy == 0 {
		return cx, cy
	}
	t := math.Inf(1)
	if dx != 0 {
		t = min(t, (b.w/2)/math.Abs(dx))
	}
	if dy != 0 {
		t = min(t, (nodeHeight/2)/math.Abs(dy))
	}
	return cx + t*dx, cy + t*dy
}

// layout ranks the boxes by longest path over the edges that close no
// cycle, orders each rank to keep edges short (barycenters, a few
// sweeps), and places them.
func layout(boxes []*box, edges [][2]int) {
	n := len(boxes)
	out := make([][]int, n)
	for _, e := range edges {
		if e[0] != e[1] {
			out[e[0]] = append(out[e[0]], e[1])
		}
	}
	// Depth-first search: an edge to a node on the stack closes a cycle
	// and is left out of the ranking.
	back := map[[2]int]bool{}
	state := make([]uint8, n) // 0 new, 1 on stack, 2 done
	var visit func(u int)
	visit = func(u int) {
		state[u] = 1
		for _, v := range out[u] {
			switch state[v] {
			case 0:
				visit(v)
			case 1:
				back[[2]int{u, v}] = true
			}
		}
		state[u] = 2
	}
	for u := range n {
		if state[u] == 0 {
			visit(u)
		}
	}
	// Longest path, in topological order of the acyclic rest.
	indeg := make([]int, n)
	for u := range n {
		for _, v := range out[u] {
			if !back[[2]int{u, v}] {
				indeg[v]++
			}
		}
	}
	var queue []int
	for u := range n {
		if indeg[u] == 0 {
			queue = append(queue, u)
		}
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range out[u] {
			if back[[2]int{u, v}] {
				continue
			}
			boxes[v].rank = max(boxes[v].rank, boxes[u].rank+1)
			if indeg[v]--; indeg[v] == 0 {
				queue = append(queue, v)
			}
		}
	}
	var ranks [][]int
	for i, b := range boxes {
		for len(ranks) <= b.rank {
			ranks = append(ranks, nil)
		}
		ranks[b.rank] = append(ranks[b.rank], i)
	}
	order(boxes, ranks, edges)
	place(boxes, ranks)
}

// order sorts each rank by the mean slot of its neighbours in the ranks
// above, then below, a few times over.
func order(boxes []*box, ranks [][]int, edges [][2]int) {
	nb := make([][]int, len(boxes))
	for _, e := range edges {
		nb[e[0]] = append(nb[e[0]], e[1])
		nb[e[1]] = append(nb[e[1]], e[0])
	}
	setSlots := func(r []int) {
		for i, b := range r {
			boxes[b].slot = i
		}
	}
	for _, r := range ranks {
		setSlots(r)
	}
	bary := func(u int, above bool) float64 {
		sum, k := 0.0, 0
		for _, v := range nb[u] {
			if (above && boxes[v].rank < boxes[u].rank) || (!above && boxes[v].rank > boxes[u].rank) {
				sum += float64(boxes[v].slot)
				k++
			}
		}
		if k == 0 {
			return float64(boxes[u].slot)
		}
		return sum / float64(k)
	}
	for sweep := range 4 {
		above := sweep%2 == 0
		for ri := range ranks {
			if !above {
				ri = len(ranks) - 1 - ri
			}
			r := ranks[ri]
			keys := make(map[int]float64, len(r))
			for _, u := range r {
				keys[u] = bary(u, above)
			}
			slices.SortStableFunc(r, func(a, b int) int {
				switch {
				case keys[a] < keys[b]:
					return -1
				case keys[a] > keys[b]:
					return 1
				}
				return 0
			})
			setSlots(r)
		}
	}
}

// place gives each box its coordinates: ranks top to bottom, each
// centered on the widest.
func place(boxes []*box, ranks [][]int) {
	widths := make([]float64, len(ranks))
	var widest float64
	for i, r := range ranks {
		for j, u := range r {
			if j > 0 {
				widths[i] += nodeGap
			}
			widths[i] += boxes[u].w
		}
		widest = max(widest, widths[i])
	}
	for i, r := range ranks {
		x := margin + (widest-widths[i])/2
		for _, u := range r {
			b := boxes[u]
			b.x = x + b.w/2
			b.y = margin + float64(i)*layerGap
			x += b.w + nodeGap
		}
	}
}
