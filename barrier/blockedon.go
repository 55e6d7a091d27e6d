package barrier

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// Goroutines blocked on a lock held at a barrier. A rank that never
// called Await has no goroutine its barrier knows, so what stops it
// cannot be looked up. But a goroutine blocked on a lock held by a rank
// waiting at the barrier may well be that rank's, and the wait is a fact:
// it is told as such, never attributed to a rank. Only a lock's holder
// links a wait to the barrier, and holders are known in lockorder's
// ModeCheck alone: in ModeTrace lock waits are registered without their
// holder, and in ModeOff not at all.

// maxBlockedNamed bounds how many such goroutines an explanation names;
// the others are counted.
const maxBlockedNamed = 3

// ExplainBlockedOnWaiters names the goroutines blocked on a lockorder
// lock held by a rank waiting, in a wait begun by [BeginExternalWait] of
// kind, at the barrier named object; ranks maps the goroutines of the
// waiting ranks to their rank, and its goroutines are not named. It is
// how a barrier built outside this package explains a rank that never
// called Await, in the words of [MissingRank]: "goroutine 42, of no known
// rank, is blocked on lock agg#1, held by goroutine 7 (rank 0), which is
// waiting at this barrier"; "" if none is. It reads the registry of waits
// once and takes no goroutine dump.
func ExplainBlockedOnWaiters(kind ExternalKind, object string, ranks map[int64]int) string {
	ws := lockWaitsOn(func(hw *waitfor.Wait) bool {
		_, ok := ranks[hw.Goroutine]
		return ok && hw.Kind == string(kind) && hw.Object == object
	})
	return blockedSentence(ws, func(w seenWait) bool {
		_, isRank := ranks[w.Goroutine]
		return isRank
	}, func(gid int64) int { return ranks[gid] })
}

// lockWaitsOn returns the lock waits, in increasing order of goroutine,
// whose holder is another goroutine whose own wait is one waiting says
// is at the barrier asked about. It reads the registry of waits once,
// and looks up the wait of each holder met.
func lockWaitsOn(waiting func(holder *waitfor.Wait) bool) []seenWait {
	var out []seenWait
	for _, w := range waitfor.All() {
		if !w.IsLock() {
			continue
		}
		sw := see(w)
		if sw.holder == 0 || sw.holder == w.Goroutine {
			continue
		}
		if hw := waitfor.Lookup(sw.holder); hw != nil && waiting(hw) {
			out = append(out, sw)
		}
	}
	slices.SortFunc(out, func(a, b seenWait) int { return cmp.Compare(a.Goroutine, b.Goroutine) })
	return out
}

// blockedSentence names the goroutines of ws, but those skip says, each
// blocked on a lock whose holder waits at the barrier as rank rankOf(holder).
func blockedSentence(ws []seenWait, skip func(seenWait) bool, rankOf func(gid int64) int) string {
	var s strings.Builder
	named, more := 0, 0
	for _, w := range ws {
		if skip(w) {
			continue
		}
		if named == maxBlockedNamed {
			more++
			continue
		}
		if named > 0 {
			s.WriteString("; ")
		}
		named++
		fmt.Fprintf(&s, "goroutine %d, of no known rank, is blocked on %s, held by goroutine %d (rank %d), which is waiting at this barrier",
			w.Goroutine, waitfor.Describe(w.Wait), w.holder, rankOf(w.holder))
	}
	if more > 0 {
		s.WriteString("; and " + strconv.Itoa(more) + " more goroutines are blocked on locks held by ranks waiting at this barrier")
	}
	return s.String()
}
