package barrier

import (
	"fmt"
	"slices"
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
	// waiting at this barrier". For a rank that never called Await it
	// starts "never arrived at this barrier", then names the goroutines,
	// of no known rank, blocked on a lock held by a rank waiting at this
	// barrier, if any (in lockorder's ModeCheck only).
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

// MaxExplained bounds how many missing ranks a break explains in
// [BrokenError.Why], so that a wide barrier breaks on time: explaining a
// rank looks its goroutine up in the waits registry and follows the
// holders of the locks it waits for.
const MaxExplained = 32

// whyLocked explains up to MaxExplained of the missing ranks of g, of
// which neverArrived never called Await, in Missing's order. The ranks
// whose goroutine is known come first, since they are stuck somewhere; a
// rank that never called Await is said to have never arrived, with the
// goroutines blocked on a lock held by a rank waiting here, if any. Called
// with b.mu held; it only reads the waits registry, whose lock is a leaf.
// Beyond reading the state of missing ranks until it has chosen the ones
// to explain, its work is bounded: at most MaxExplained chains of at most
// maxChain lookups, one read of the rank table to name the ranks of the
// goroutines met, and, if a rank that never arrived is explained, one
// read of the waits registry.
func (b *Barrier) whyLocked(g *generation, missing []int, neverArrived int) []MissingRank {
	known := min(len(missing)-neverArrived, MaxExplained)
	never := min(neverArrived, MaxExplained-known)
	if known+never == 0 {
		return nil
	}
	x := explainer{b: b, g: g, holders: make(map[int64]bool)}
	why := make([]MissingRank, 0, known+never)
	chains := make([]chain, 0, known+never)
	for _, r := range missing {
		if known+never == 0 {
			break
		}
		switch gid := b.ranks.get(r).gid; {
		case gid != 0 && known > 0:
			known--
			m, c := x.trace(r, gid)
			why, chains = append(why, m), append(chains, c)
		case gid == 0 && never > 0:
			never--
			why = append(why, MissingRank{Rank: r, HolderRank: -1, Reason: reasonNeverArrived})
			chains = append(chains, chain{})
		}
	}
	if slices.ContainsFunc(why, neverCame) {
		x.blockedOnWaiters()
	}
	x.render(why, chains)
	if text := x.blockedText(); text != "" {
		for i := range why {
			if neverCame(why[i]) {
				why[i].Reason = reasonNeverArrived + "; " + text
			}
		}
	}
	return why
}

// neverCame reports whether m is the explanation of a rank that never
// called Await.
func neverCame(m MissingRank) bool { return m.Goroutine == 0 && m.Reason == reasonNeverArrived }

// A chain is what an explanation follows: the wait of a missing rank's
// goroutine, then the wait of the holder of each lock waited for.
type chain struct {
	waits []seenWait
	end   chainEnd
}

// seenWait is a wait as the explanation saw it: the holder of a lock is
// read once, so that the text and the fields agree.
type seenWait struct {
	*waitfor.Wait
	holder int64
}

// see reads w's holder.
func see(w *waitfor.Wait) seenWait { return seenWait{w, w.Holder()} }

// chainEnd says why a chain stops after its last wait, when that wait is
// for a lock whose holder is known.
type chainEnd uint8

const (
	endFollowed   chainEnd = iota // the last wait has no holder to follow
	endCycle                      // the holder's wait is already in the chain
	endNotWaiting                 // the holder is in no syncwatch wait
	endTruncated                  // the last wait is the holder's, not followed: maxChain
)

type explainer struct {
	b       *Barrier
	g       *generation
	holders map[int64]bool // the lock holders met, to name their ranks
	rank    map[int64]int  // holder -> its rank at this barrier
	here    map[int64]bool // holders waiting at this barrier for g
	// blocked are the lock waits whose holder waits at this barrier (see
	// blockedOnWaiters), by goroutine.
	blocked []seenWait
}

// trace starts the explanation of rank, whose latest arrival was made by
// goroutine gid: it follows the waits from gid's through the registry.
func (x *explainer) trace(rank int, gid int64) (MissingRank, chain) {
	m := MissingRank{Rank: rank, Goroutine: gid, HolderRank: -1}
	lw := waitfor.Lookup(gid)
	if lw == nil {
		m.Reason = reasonNotWaiting
		return m, chain{}
	}
	w := see(lw)
	m.WaitingFor = x.object(w)
	c := chain{waits: []seenWait{w}}
	seen := map[int64]bool{gid: true}
	for {
		w := c.waits[len(c.waits)-1]
		if !w.IsLock() || w.holder == 0 {
			return m, c
		}
		h := w.holder
		x.holders[h] = true
		if seen[h] {
			c.end = endCycle
			return m, c
		}
		hw := waitfor.Lookup(h)
		if hw == nil {
			c.end = endNotWaiting
			return m, c
		}
		c.waits = append(c.waits, see(hw))
		if len(c.waits) > maxChain {
			c.end = endTruncated
			return m, c
		}
		seen[h] = true
	}
}

// render names the ranks of the holders met, then writes the reason of
// each traced explanation.
func (x *explainer) render(why []MissingRank, chains []chain) {
	if len(x.holders) > 0 {
		x.rank, x.here = x.b.ranks.ranksOf(x.g.num, x.holders)
	}
	for i, c := range chains {
		if len(c.waits) == 0 {
			continue // never arrived, or not waiting: the reason is set
		}
		if w := c.waits[0]; w.holder != 0 {
			why[i].Holder = w.holder
			why[i].HolderRank = x.rankOf(w.holder)
		}
		var s strings.Builder
		x.describe(&s, c, 0)
		why[i].Reason = s.String()
	}
}

// describe writes "waiting for X[, held by goroutine H (rank R), which
// ...]" for the i-th wait of c and what follows it.
func (x *explainer) describe(s *strings.Builder, c chain, i int) {
	w := c.waits[i]
	if w.Kind == waitfor.KindBarrier {
		s.WriteString("waiting at " + x.object(w))
		return
	}
	s.WriteString("waiting for " + x.object(w))
	if !w.IsLock() {
		return
	}
	h := w.holder
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
	last := i == len(c.waits)-1
	switch {
	case last && c.end == endCycle:
		s.WriteString(", which closes a cycle of waits: deadlock")
	case x.here[h]:
		s.WriteString(", which is waiting at this barrier")
	case last && c.end == endNotWaiting:
		s.WriteString(", which is " + reasonNotWaiting)
	case i == len(c.waits)-2 && c.end == endTruncated:
		s.WriteString(", which is " + "waiting for " + x.object(c.waits[i+1]) + " (chain truncated)")
	default:
		s.WriteString(", which is ")
		x.describe(s, c, i+1)
	}
}

// rankOf returns the rank goroutine gid, a holder met, waits as or last
// waited as at this barrier; -1 if none.
func (x *explainer) rankOf(gid int64) int {
	if r, ok := x.rank[gid]; ok {
		return r
	}
	return -1
}

// object names what w waits for.
func (x *explainer) object(w seenWait) string {
	if w.Kind == waitfor.KindBarrier && w.ObjectID == x.b.id {
		name := "this barrier"
		if w.Detail != "" {
			name += " (" + w.Detail + ")"
		}
		return name
	}
	return waitfor.Describe(w.Wait)
}

// blockedOnWaiters finds the goroutines blocked on a lock whose recorded
// holder is waiting at this barrier (see blockedon.go). Goroutines that
// made a rank's latest arrival are left out by blockedText: they are
// explained as that rank.
func (x *explainer) blockedOnWaiters() {
	x.blocked = lockWaitsOn(func(hw *waitfor.Wait) bool {
		return hw.Kind == waitfor.KindBarrier && hw.ObjectID == x.b.id
	})
	for _, w := range x.blocked {
		x.holders[w.holder] = true
		x.holders[w.Goroutine] = true // to leave it out if it made a rank's arrival
	}
}

// blockedText names the goroutines blockedOnWaiters found, whose holder
// waits at this barrier for the generation explained, or "" if none.
// Called after render has named the ranks of the goroutines met.
func (x *explainer) blockedText() string {
	return blockedSentence(x.blocked, func(w seenWait) bool {
		_, isRank := x.rank[w.Goroutine]
		return isRank || !x.here[w.holder]
	}, x.rankOf)
}
