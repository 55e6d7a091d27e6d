package barrier

import (
	"fmt"
	"strings"

	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// MissingRank says why a rank had not arrived when its generation broke
// (or when the slow report was made): what the goroutine of the rank's
// latest Await is blocked on, as recorded in syncwatch's waits registry,
// and who holds it.
type MissingRank struct {
	Rank int
	// Goroutine is the goroutine of the rank's latest Await, 0 if the rank
	// never called Await.
	Goroutine int64
	// WaitingFor names the syncwatch wait Goroutine is blocked in: "lock
	// aggregation_lock#1", "barrier eval (rank 2, generation 5)". It is
	// empty when Goroutine is in no syncwatch wait.
	WaitingFor string
	// Holder is the goroutine holding the lock waited for, 0 if unknown or
	// if the wait is not for a lock; HolderRank is its rank at this
	// barrier, or -1.
	Holder     int64
	HolderRank int
	// Reason is the whole account, following the chain of holders: "waiting
	// for lock aggregation_lock#1, held by goroutine 812 (rank 3), which is
	// waiting at this barrier".
	Reason string
}

// String returns "rank N: Reason".
func (m MissingRank) String() string { return fmt.Sprintf("rank %d: %s", m.Rank, m.Reason) }

// The reasons for ranks whose goroutine is in no syncwatch wait.
const (
	reasonNeverArrived = "never arrived at this barrier"
	reasonNotWaiting   = "not waiting in syncwatch (running, or blocked elsewhere)"
)

// maxChain bounds how many holders an explanation follows.
const maxChain = 8

// whyLocked explains each missing rank of g. Called with b.mu held; it
// only reads the waits registry, whose lock is a leaf.
func (b *Barrier) whyLocked(g *generation, missing []int) []MissingRank {
	if len(missing) == 0 {
		return nil
	}
	x := explainer{b: b, waiting: make(map[int64]int, len(g.arrivals))}
	for _, a := range g.arrivals {
		x.waiting[a.Goroutine] = a.Rank
	}
	out := make([]MissingRank, len(missing))
	for i, r := range missing {
		out[i] = x.explain(r)
	}
	return out
}

type explainer struct {
	b       *Barrier
	waiting map[int64]int // goroutines waiting at the barrier now -> rank
}

func (x *explainer) explain(rank int) MissingRank {
	m := MissingRank{Rank: rank, Goroutine: x.b.lastGID[rank], HolderRank: -1}
	if m.Goroutine == 0 {
		m.Reason = reasonNeverArrived
		return m
	}
	w := waitfor.Lookup(m.Goroutine)
	if w == nil {
		m.Reason = reasonNotWaiting
		return m
	}
	m.WaitingFor = x.object(w)
	if h := w.Holder(); h != 0 {
		m.Holder = h
		m.HolderRank = x.rankOf(h)
	}
	var s strings.Builder
	x.describe(&s, w, map[int64]bool{m.Goroutine: true}, 0)
	m.Reason = s.String()
	return m
}

// describe writes "waiting for X[, held by goroutine H (rank R), which
// ...]" for w, following lock holders through the registry.
func (x *explainer) describe(s *strings.Builder, w *waitfor.Wait, seen map[int64]bool, depth int) {
	if w.Kind == "barrier" {
		s.WriteString("waiting at " + x.object(w))
		return
	}
	s.WriteString("waiting for " + x.object(w))
	if !w.IsLock() {
		return
	}
	h := w.Holder()
	if h == 0 {
		if w.HolderKnown {
			s.WriteString(", holder unknown")
		} else {
			s.WriteString(", holder not tracked in this mode")
		}
		return
	}
	fmt.Fprintf(s, ", held by goroutine %d", h)
	if r := x.rankOf(h); r >= 0 {
		fmt.Fprintf(s, " (rank %d)", r)
	}
	switch hw := waitfor.Lookup(h); {
	case seen[h]:
		s.WriteString(", which closes a cycle of waits: deadlock")
	case x.waitingHere(h):
		s.WriteString(", which is waiting at this barrier")
	case hw == nil:
		s.WriteString(", which is " + reasonNotWaiting)
	case depth+1 >= maxChain:
		s.WriteString(", which is " + "waiting for " + x.object(hw) + " (chain truncated)")
	default:
		seen[h] = true
		s.WriteString(", which is ")
		x.describe(s, hw, seen, depth+1)
	}
}

// waitingHere reports whether goroutine gid is waiting at this barrier for
// the current generation.
func (x *explainer) waitingHere(gid int64) bool {
	_, ok := x.waiting[gid]
	return ok
}

// rankOf returns the rank goroutine gid waits as, or last waited as, at
// this barrier; -1 if none.
func (x *explainer) rankOf(gid int64) int {
	if r, ok := x.waiting[gid]; ok {
		return r
	}
	for r, g := range x.b.lastGID {
		if g == gid {
			return r
		}
	}
	return -1
}

// object names what w waits for.
func (x *explainer) object(w *waitfor.Wait) string {
	if w.Kind == waitfor.KindBarrier && w.ObjectID == x.b.id {
		name := "this barrier"
		if w.Detail != "" {
			name += " (" + w.Detail + ")"
		}
		return name
	}
	return waitfor.Describe(w)
}
