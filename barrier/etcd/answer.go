package etcd

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/syncwatch/syncwatch/barrier"
)

// Asking and answering. A waiter whose wait is half over, and again
// shortly before its bound, asks: it puts "GEN.ROUND" into P/c/ask, if no
// one asked for that round yet (a compare on the value, so each round is
// asked once across every process). Every process sees the ask in its
// watch; its answerer explains, for each of its members the ask is about,
// what the goroutine of the member's latest Await is doing, from this
// process's wait-for graph, and puts that into the member's key. The
// break then reads the answers from its own view. Answers are bounded:
// one put per missing rank per round, two rounds per generation, and a
// process's answerer handles one ask at a time, the latest.

// ask asks the missing ranks of round of position pos (a generation, or a
// clock value) to say what they are doing. Errors are ignored: an
// unanswered ask only makes the explanation poorer.
func (g *group) ask(ctx context.Context, pos uint64, round int) {
	v := askValue(pos, round)
	ctx, cancel := context.WithTimeout(ctx, g.cfg.decideTimeout)
	defer cancel()
	g.cli.Txn(ctx).If(clientv3.Compare(clientv3.Value(g.k.ask()), "<", v)). //nolint:errcheck // see above
										Then(clientv3.OpPut(g.k.ask(), v)).Commit()
}

// askPos returns the position an ask is about.
func askPos(ask string) uint64 {
	s, _, _ := strings.Cut(ask, ".")
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

// answerer answers asks until ctx ends.
func (g *group) answerer(ctx context.Context) {
	defer g.done.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case ask := <-g.asks:
			g.answer(ctx, ask)
		}
	}
}

// answer puts, for each member the ask is about, what it is doing.
func (g *group) answer(ctx context.Context, ask string) {
	type job struct {
		m    *member
		step int64
	}
	var jobs []job
	local := map[int64]int{} // goroutine of a member's latest call -> its rank
	g.mu.Lock()
	for _, m := range g.members {
		if gid := m.gid.Load(); gid != 0 {
			local[gid] = m.rank
		}
		if !m.closing && g.needsAnswer(m, ask) {
			jobs = append(jobs, job{m, g.step(m)})
		}
	}
	g.mu.Unlock()
	blocked, looked := "", false
	for _, j := range jobs {
		m := j.m
		a := &answer{Ask: ask, Step: j.step, HolderRank: -1,
			RenewedAgo: time.Since(time.Unix(0, m.lastRenew.Load()))}
		if gid := m.gid.Load(); gid != 0 {
			w := barrier.ExplainGoroutine(gid)
			a.Goroutine, a.Waiting, a.State = gid, w.Waiting, w.State
			if w.Waiting {
				a.Kind, a.WaitingFor, a.Holder, a.Reason = w.Kind, w.WaitingFor, w.Holder, w.Reason
				if r, ok := local[w.Holder]; ok && w.Holder != 0 {
					a.HolderRank = r
					held := "held by goroutine " + strconv.FormatInt(w.Holder, 10)
					a.Reason = strings.Replace(a.Reason, held, held+" (rank "+strconv.Itoa(r)+")", 1)
				}
			}
		}
		if !a.Waiting && a.Step < 0 && g.kind == barrier.ExternalBarrier {
			if !looked {
				blocked = barrier.ExplainBlockedOnWaiters(g.kind, g.cfg.name, local)
				looked = true
			}
			a.Blocked = blocked
		}
		st := memberState{PID: g.pid, Host: g.host, Handle: g.handle, Lease: int64(m.lease), Answer: a}
		g.mu.Lock()
		st.Clock = m.clock
		g.mu.Unlock()
		b, _ := json.Marshal(st)
		key := g.k.member(m.rank)
		actx, cancel := context.WithTimeout(ctx, g.cfg.decideTimeout)
		g.cli.Txn(actx).If(clientv3.Compare(clientv3.LeaseValue(key), "=", m.lease)). //nolint:errcheck // best effort
												Then(clientv3.OpPut(key, string(b), clientv3.WithLease(m.lease))).Commit()
		cancel()
	}
}
