package barrier

import (
	"maps"
	"slices"
)

// rankState is what the barrier keeps about one rank.
type rankState struct {
	// next is the generation the rank's next Await is for. It is set to
	// g+1 when the rank arrives for generation g, so a rank has arrived
	// for the current generation exactly when next is past it.
	next uint64
	// gid is the goroutine of the rank's latest arrival, 0 if none.
	gid int64
	// ops counts the rank's labelled arrivals (see Op), nil if none.
	ops *OpCounts
}

// pageShift sets the size of a page of the rank table: 1024 ranks.
const (
	pageShift = 10
	pageSize  = 1 << pageShift
	pageMask  = pageSize - 1
)

// rankTable holds the state of every rank in pages, each allocated when
// one of its ranks first arrives. A barrier's memory so grows with the
// ranks that use it, not with its number of parties: a barrier for 2^26
// parties costs one page index until ranks arrive. A rank whose page is
// not allocated has the zero rankState: it never arrived, and its next
// Await is for generation 0.
type rankTable struct {
	parties int
	pages   [][]rankState
}

func newRankTable(parties int) rankTable {
	return rankTable{parties: parties, pages: make([][]rankState, (parties+pageMask)>>pageShift)}
}

// at returns rank's state for update, allocating its page.
func (t *rankTable) at(rank int) *rankState {
	p := &t.pages[rank>>pageShift]
	if *p == nil {
		*p = make([]rankState, t.pageLen(rank>>pageShift))
	}
	return &(*p)[rank&pageMask]
}

// get returns rank's state, the zero rankState if its page is not
// allocated.
func (t *rankTable) get(rank int) rankState {
	if p := t.pages[rank>>pageShift]; p != nil {
		return p[rank&pageMask]
	}
	return rankState{}
}

// pageLen returns the number of ranks of page i: pageSize but for the
// last page.
func (t *rankTable) pageLen(i int) int {
	return min(pageSize, t.parties-i<<pageShift)
}

// absent returns, in increasing order, the ranks that have not arrived for
// generation gen: the participating ones (missing, of which the caller
// expects nmissing) and the departed ones (left). It also counts the
// missing ranks that never arrived at all. It reads each allocated page
// once and writes a whole unallocated page as one run.
func (t *rankTable) absent(gen uint64, nmissing int, departed map[int]error) (missing, left []int, neverArrived int) {
	if nmissing > 0 {
		missing = make([]int, 0, nmissing)
	}
	var gone []int // the departed ranks, increasing
	if len(departed) > 0 {
		gone = slices.Sorted(maps.Keys(departed))
	}
	for i, p := range t.pages {
		base, n := i<<pageShift, t.pageLen(i)
		for len(gone) > 0 && gone[0] < base {
			gone = gone[1:] // departed after arriving for gen
		}
		if p == nil && (len(gone) == 0 || gone[0] >= base+n) { // a run
			l := len(missing)
			missing = slices.Grow(missing, n)[:l+n]
			for k := range n {
				missing[l+k] = base + k
			}
			neverArrived += n
			continue
		}
		for j := range n {
			var st rankState
			if p != nil {
				st = p[j]
			}
			r := base + j
			for len(gone) > 0 && gone[0] < r {
				gone = gone[1:] // departed after arriving for gen
			}
			if st.next > gen {
				continue // arrived
			}
			if len(gone) > 0 && gone[0] == r {
				left, gone = append(left, r), gone[1:]
				continue
			}
			missing = append(missing, r)
			if st.gid == 0 {
				neverArrived++
			}
		}
	}
	return missing, left, neverArrived
}

// ranksOf returns, for each goroutine of gids that made a rank's latest
// arrival, the rank it arrived as for generation gen (here), or else the
// lowest such rank. It reads every allocated page once.
func (t *rankTable) ranksOf(gen uint64, gids map[int64]bool) (rank map[int64]int, here map[int64]bool) {
	rank, here = make(map[int64]int, len(gids)), make(map[int64]bool)
	for i, p := range t.pages {
		for j, st := range p {
			if st.gid == 0 || !gids[st.gid] {
				continue
			}
			r := i<<pageShift + j
			if st.next > gen { // arrived for gen: waiting at the barrier
				rank[st.gid], here[st.gid] = r, true
			} else if _, ok := rank[st.gid]; !ok {
				rank[st.gid] = r
			}
		}
	}
	return rank, here
}
