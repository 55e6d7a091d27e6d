package etcd

import (
	"fmt"
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/barrier"
)

// whyLocked explains, from this process's view, why each of ranks (at
// most barrier.MaxExplained of them) is missing from position pos: its
// lease expired at T, or it is alive and blocked in a syncwatch wait, or
// alive elsewhere, last seen at step S. stepWord names a position in the
// text ("generation", "clock"). Called with g.mu held; it makes no call
// to etcd.
func (g *group) whyLocked(ranks []int, pos uint64, stepWord string, now time.Time) []barrier.MissingRank {
	out := make([]barrier.MissingRank, 0, min(len(ranks), barrier.MaxExplained))
	for _, r := range ranks {
		if len(out) == barrier.MaxExplained {
			break
		}
		out = append(out, g.explainLocked(r, pos, stepWord, now))
	}
	return out
}

// The reasons of ranks the view knows nothing about, or that left.
const (
	reasonNoLease = "no live lease: never joined, or its lease expired before this process was watching"
	reasonLeft    = "left: closed its handle"
)

func (g *group) explainLocked(r int, pos uint64, stepWord string, now time.Time) barrier.MissingRank {
	m := barrier.MissingRank{Rank: r, HolderRank: -1}
	p := g.view[r]
	switch {
	case p == nil:
		m.Reason = reasonNoLease
		return m
	case p.gone && p.left:
		m.Reason = fmt.Sprintf("%s at %s (%s ago)", reasonLeft, p.goneAt.Format(timeFormat), since(p.goneAt, now))
		return m
	case p.gone:
		m.Reason = fmt.Sprintf("lease expired at %s (%s ago): the process died or is cut off from etcd",
			p.goneAt.Format(timeFormat), since(p.goneAt, now))
		if a := p.state.Answer; a != nil && a.Step >= 0 {
			m.Reason += fmt.Sprintf("; last seen at %s %d", stepWord, a.Step)
		}
		return m
	}
	where := fmt.Sprintf("pid %d on %s", p.state.PID, p.state.Host)
	if q, at, ok := g.deadSiblingLocked(r, p); ok {
		// Leases of one process expire one by one: the first says the
		// process is gone, whatever this rank's lease still says.
		m.Reason = fmt.Sprintf("its process (%s) lost the lease of rank %d, which joined with it: lease expired at %s (%s ago): the process died or is cut off from etcd; this rank's own lease has not expired yet",
			where, q, at.Format(timeFormat), since(at, now))
		return m
	}
	a := p.state.Answer
	if a == nil || askPos(a.Ask) < pos {
		m.Reason = fmt.Sprintf("alive (its lease is live; %s), did not say what it is doing", where)
		return m
	}
	alive := fmt.Sprintf("alive (lease renewed %s before it answered, %s ago; %s)",
		a.RenewedAgo.Round(time.Millisecond), since(p.seenAt, now), where)
	m.Goroutine = a.Goroutine
	switch {
	case a.Waiting:
		m.WaitingFor, m.Holder, m.HolderRank = a.WaitingFor, a.Holder, a.HolderRank
		m.Reason = alive + ", blocked in a syncwatch wait: " + a.Reason
	case a.Goroutine == 0:
		m.Reason = alive + ", has not called Await yet"
		if a.Blocked != "" {
			m.Reason += "; " + a.Blocked
		}
	default:
		var s strings.Builder
		s.WriteString(alive + ", not in a syncwatch wait")
		if a.State != "" {
			fmt.Fprintf(&s, " (goroutine %d %s)", a.Goroutine, a.State)
		}
		if a.Step >= 0 {
			fmt.Fprintf(&s, ", last seen at %s %d", stepWord, a.Step)
		} else {
			s.WriteString(", never arrived")
			if a.Blocked != "" {
				s.WriteString("; " + a.Blocked)
			}
		}
		m.Reason = s.String()
	}
	return m
}

// timeFormat writes the times of explanations: the wall clock of the
// process that explains.
const timeFormat = "15:04:05.000"

// deadSiblingLocked returns a rank that joined through the same handle as
// rank r (whose view is p), in the same process, and whose lease expired,
// and when; ok is false if there is none. Called with g.mu held.
func (g *group) deadSiblingLocked(r int, p *peer) (rank int, at time.Time, ok bool) {
	if p.state.Handle == "" {
		return 0, time.Time{}, false
	}
	rank = -1
	for q, o := range g.view {
		if q == r || !o.gone || o.left || o.state.Handle != p.state.Handle || o.state.PID != p.state.PID || o.state.Host != p.state.Host {
			continue
		}
		if rank < 0 || q < rank {
			rank, at = q, o.goneAt
		}
	}
	return rank, at, rank >= 0
}
