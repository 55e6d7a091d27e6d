package graph

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// A differential test against the graph without R26 (as at af3fe25):
// whenever the true pairs (on present edges, or of one class) close a
// cycle of locks across classes, if the baseline reported some cycle
// whose edges all lie in that lock cycle's walk, the R26 graph must have
// too.
func TestRandomRunsHideNoCycleOfLocksTheBaselineFinds(t *testing.T) {
	for seed := int64(0); seed < 100000; seed++ {
		if msg := r26dDiff(seed); msg != "" {
			t.Fatalf("seed %d:\n%s", seed, msg)
		}
	}
}

type ek struct{ f, t NodeID }

func r26dDiff(seed int64) string {
	r := rand.New(rand.NewSource(seed))
	nc := 2 + r.Intn(3)
	nl := 3 + r.Intn(6)
	cls := make([]NodeID, nl)
	for i := range cls {
		cls[i] = NodeID(1 + r.Intn(nc))
	}
	var g, h Graph
	g.EnableRoles()
	dead := map[int]bool{}
	truth := map[[2]int]bool{}
	var repG, repH [][]ek
	var log []string
	keys := func(c Cycle) []ek {
		var out []ek
		for _, e := range c {
			out = append(out, ek{e.From, e.To})
		}
		return out
	}
	recheck := func(es []*Edge) {
		for _, e := range es {
			if c := g.Recheck(e, nil); c != nil {
				repG = append(repG, keys(c))
			}
		}
	}
	lid := func(i int) NodeID { return NodeID(100 + i) }
	add := func(f, to NodeID) {
		if _, _, c := g.Add(f, to, Observation{}, nil); c != nil {
			repG = append(repG, keys(c))
		}
		if _, _, c := h.Add(f, to, Observation{}, nil); c != nil {
			repH = append(repH, keys(c))
		}
	}
	for op := 0; op < 2+r.Intn(40); op++ {
		a, b := r.Intn(nl), r.Intn(nl)
		if a == b || dead[a] || dead[b] {
			continue
		}
		f, to := cls[a], cls[b]
		kind := r.Intn(10)
		switch {
		case kind < 5:
			log = append(log, fmt.Sprintf("join %d(%d)->%d(%d)", a, f, b, to))
			truth[[2]int{a, b}] = true
			again := g.Sight(f, to, [2]NodeID{lid(a), lid(b)}, true)
			if f != to {
				add(f, to)
			}
			recheck(again)
		case kind < 7:
			log = append(log, fmt.Sprintf("sight %d(%d)->%d(%d)", a, f, b, to))
			truth[[2]int{a, b}] = true
			recheck(g.Sight(f, to, [2]NodeID{lid(a), lid(b)}, true))
		case kind < 8:
			if f == to {
				continue
			}
			log = append(log, fmt.Sprintf("edge %d->%d", f, to))
			add(f, to)
		case kind < 9:
			log = append(log, fmt.Sprintf("forget %d", a))
			dead[a] = true
			g.Forget(lid(a))
		default:
			if r.Intn(3) != 0 {
				continue
			}
			log = append(log, fmt.Sprintf("lose %d->%d (then unseen pair)", f, to))
			recheck(g.LosePairs(f, to))
			truth[[2]int{a, b}] = true // the unseen pair
		}
		// the true lock graph: live locks, pairs on present edges or of one class
		out := map[int][]int{}
		for p := range truth {
			if dead[p[0]] || dead[p[1]] {
				continue
			}
			cf, ct := cls[p[0]], cls[p[1]]
			if cf != ct && g.edges[edgeKey{cf, ct, false}] == nil {
				continue
			}
			out[p[0]] = append(out[p[0]], p[1])
		}
		if msg := checkCycles(out, cls, repG, repH); msg != "" {
			return fmt.Sprintf("classes %v\nops:\n  %s\n%s", cls, strings.Join(log, "\n  "), msg)
		}
	}
	return ""
}

// checkCycles enumerates simple cycles of locks across classes.
func checkCycles(out map[int][]int, cls []NodeID, repG, repH [][]ek) string {
	n := len(cls)
	var path []int
	on := make([]bool, n)
	var msg string
	within := func(c []ek, walk map[ek]bool) bool {
		ns := map[NodeID]bool{}
		for k := range walk {
			ns[k.f], ns[k.t] = true, true
		}
		for _, k := range c {
			if !ns[k.f] || !ns[k.t] {
				return false
			}
		}
		return true
	}
	var dfs func(start, x int)
	dfs = func(start, x int) {
		if msg != "" {
			return
		}
		for _, y := range out[x] {
			if y == start {
				walk := map[ek]bool{}
				mixed := false
				cyc := append(append([]int{}, path...), start)
				for i := 0; i+1 < len(cyc); i++ {
					cf, ct := cls[cyc[i]], cls[cyc[i+1]]
					if cf != ct {
						mixed = true
						walk[ek{cf, ct}] = true
					}
				}
				if !mixed {
					continue
				}
				okH, okG := false, false
				for _, c := range repH {
					okH = okH || within(c, walk)
				}
				for _, c := range repG {
					okG = okG || within(c, walk)
				}
				if okH && !okG {
					msg = fmt.Sprintf("lock cycle %v: baseline reported a cycle in its walk %v, R26 none (R26 reported %v)", cyc, walk, repG)
				}
				continue
			}
			if y < start || on[y] {
				continue
			}
			on[y] = true
			path = append(path, y)
			dfs(start, y)
			path = path[:len(path)-1]
			on[y] = false
		}
	}
	for s := 0; s < n; s++ {
		on[s] = true
		path = []int{s}
		dfs(s, s)
		on[s] = false
	}
	return msg
}
