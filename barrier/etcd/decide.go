package etcd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/syncwatch/syncwatch/barrier"
)

// waitVerdict waits, after the rank arrived at revision rev, until the
// generation is decided or the wait ends. It watches the generation's key
// from rev on and the view of the ranks; halfway through its bound, and
// shortly before it, it asks the missing ranks what they are doing (and
// reads the generation's key, in case the watch missed it). Every exit
// but a verdict seen goes through one deciding transaction.
func (w *wait) waitVerdict(ctx context.Context, rev int64) (*verdict, error) {
	g := w.b.g
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	wch := g.cli.Watch(wctx, g.k.gen(w.gen), clientv3.WithRev(rev+1))
	timeout := g.cfg.timeout
	window := min(timeout/4, 2*time.Second)
	halfway := time.NewTimer(time.Until(w.start.Add(timeout / 2)))
	lastAsk := time.NewTimer(time.Until(w.deadline.Add(-window)))
	bound := time.NewTimer(time.Until(w.deadline))
	defer halfway.Stop()
	defer lastAsk.Stop()
	defer bound.Stop()
	// Asks and reads run beside the wait, so that an etcd slow to answer
	// never holds the wait past its bound.
	polled := make(chan *verdict, 2)
	poll := func(round int) { // at most two: polled never blocks
		go func() { polled <- w.askAndPoll(wctx, round) }()
	}
	for {
		changed := g.changes()
		if gone, left := w.goneRanks(); len(gone) > 0 {
			return w.breakFor(ctx, goneCause(gone, left))
		}
		select {
		case resp, ok := <-wch:
			if !ok {
				wch = nil // the deadline still ends the wait
				continue
			}
			for _, ev := range resp.Events {
				if ev.Type == mvccpb.PUT && ev.Kv.Version >= 2 {
					v, err := decodeVerdict(ev.Kv.Value)
					if err != nil {
						return nil, w.unavailable(err)
					}
					return w.finish(ctx, v)
				}
			}
		case <-changed:
		case <-halfway.C:
			poll(1)
		case <-lastAsk.C:
			poll(2)
		case v := <-polled:
			if v != nil {
				return w.finish(ctx, v)
			}
		case <-bound.C:
			return w.breakFor(ctx, w.endCause(ctx))
		case <-ctx.Done():
			return w.breakFor(ctx, w.endCause(ctx))
		case <-w.m.lost:
			return w.breakFor(ctx, cause{kind: causeLeaseExpired, by: w.m.rank,
				text: fmt.Sprintf("rank %d lost its own lease while waiting", w.m.rank)})
		}
	}
}

// askAndPoll asks the missing ranks for round, and reads the generation's
// key; it returns the verdict if there is one.
func (w *wait) askAndPoll(ctx context.Context, round int) *verdict {
	g := w.b.g
	g.ask(ctx, w.gen, round)
	pctx, cancel := context.WithTimeout(ctx, g.cfg.decideTimeout)
	defer cancel()
	resp, err := g.cli.Get(pctx, g.k.gen(w.gen))
	if err != nil || len(resp.Kvs) == 0 || resp.Kvs[0].Version < 2 {
		return nil
	}
	v, err := decodeVerdict(resp.Kvs[0].Value)
	if err != nil {
		return nil
	}
	return v
}

// cause is why a wait ended before its generation completed.
type cause struct {
	kind     string
	text     string
	by       int
	mismatch *barrier.MismatchError
}

// endCause says why the wait ended: ctx, or the barrier's timeout.
func (w *wait) endCause(ctx context.Context) cause {
	r := w.m.rank
	if err := ctx.Err(); err != nil {
		kind := causeCanceled
		if errors.Is(err, context.DeadlineExceeded) {
			kind = causeTimeout
		}
		text := fmt.Sprintf("rank %d: %v", r, err)
		if c := context.Cause(ctx); c != nil && c != err {
			text += ": " + c.Error()
		}
		return cause{kind: kind, text: text, by: r}
	}
	return cause{kind: causeTimeout, by: r,
		text: fmt.Sprintf("rank %d timed out after %v: %v", r, w.b.g.cfg.timeout, context.DeadlineExceeded)}
}

// goneRanks returns the ranks whose key was deleted, in increasing order,
// and which of them left by closing their handle.
func (w *wait) goneRanks() (gone []int, left map[int]bool) {
	g := w.b.g
	g.mu.Lock()
	defer g.mu.Unlock()
	for r, p := range g.view {
		if p.gone {
			gone = append(gone, r)
			if p.left {
				if left == nil {
					left = map[int]bool{}
				}
				left[r] = true
			}
		}
	}
	slices.Sort(gone)
	return gone, left
}

func goneCause(gone []int, left map[int]bool) cause {
	r := gone[0]
	if left[r] {
		return cause{kind: causeLeft, by: -1, text: fmt.Sprintf("rank %d left the barrier (closed its handle)", r)}
	}
	return cause{kind: causeLeaseExpired, by: -1,
		text: fmt.Sprintf("rank %d's lease expired: its process died or is cut off from etcd", r)}
}

// breakFor decides the generation broken for c, unless it was decided
// first: it reads who arrived, explains who did not from this process's
// view, and writes the verdict in one transaction.
func (w *wait) breakFor(ctx context.Context, c cause) (*verdict, error) {
	g := w.b.g
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.cfg.decideTimeout)
	defer cancel()
	resp, err := g.cli.Get(dctx, g.k.arrivals(w.gen), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, w.unavailable(err)
	}
	arrived := make(map[int]bool, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if r, ok := rankOf(string(kv.Key), g.k.arrivals(w.gen)); ok {
			arrived[r] = true
		}
	}
	var missing []int
	for r := range g.parties {
		if !arrived[r] {
			missing = append(missing, r)
		}
	}
	now := time.Now()
	g.mu.Lock()
	why := g.whyLocked(missing, w.gen, "generation", now)
	g.mu.Unlock()
	v := &verdict{State: stateBroken, Cause: c.kind, Text: c.text, BrokenBy: c.by, Missing: toRanges(missing),
		Why: why, Waited: now.Sub(w.start), Mismatch: c.mismatch, At: now}
	return w.decideIn(dctx, ctx, v)
}

// decide writes v as the generation's verdict unless it was decided
// first, bounded by the decide timeout.
func (w *wait) decide(ctx context.Context, v *verdict) (*verdict, error) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.b.g.cfg.decideTimeout)
	defer cancel()
	v.At = time.Now()
	return w.decideIn(dctx, ctx, v)
}

// decideIn is the one transaction that decides a generation: if its key
// is still at version 1 (pending), it writes v, and deletes the
// generation that falls out of the history; otherwise it reads the
// verdict that was decided first. Either way the rank returns the
// generation's one verdict.
func (w *wait) decideIn(dctx, ctx context.Context, v *verdict) (*verdict, error) {
	g := w.b.g
	kg := g.k.gen(w.gen)
	ops := []clientv3.Op{clientv3.OpPut(kg, v.encode())}
	if h := uint64(g.cfg.history); w.gen >= h {
		old := w.gen - h
		ops = append(ops, clientv3.OpDelete(g.k.gen(old), clientv3.WithPrefix()),
			clientv3.OpPut(g.k.floor(), padGen(old+1)))
	}
	resp, err := g.cli.Txn(dctx).If(clientv3.Compare(clientv3.Version(kg), "=", 1)).
		Then(ops...).Else(clientv3.OpGet(kg)).Commit()
	if err != nil {
		return nil, w.unavailable(err)
	}
	if resp.Succeeded {
		return w.finish(ctx, v)
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return nil, w.unavailable(fmt.Errorf("generation %d was never opened", w.gen))
	}
	decided, err := decodeVerdict(kvs[0].Value)
	if err != nil || !decided.decided() {
		return nil, w.unavailable(fmt.Errorf("generation %d: unexpected state: %v", w.gen, err))
	}
	return w.finish(ctx, decided)
}

// finish returns the error of verdict v: nil if the generation completed,
// its *barrier.BrokenError if it broke, reported once in this process.
func (w *wait) finish(ctx context.Context, v *verdict) (*verdict, error) {
	if v.State == stateDone {
		return v, nil
	}
	be := v.brokenError(w.b.g.cfg.name, w.gen, w.b.g.parties)
	if v.Cause != causeNotKept {
		w.b.report(ctx, be)
	}
	return v, be
}
