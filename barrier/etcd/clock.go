package etcd

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/staleness"
)

// A Clock is one process's handle on stale synchronous parallel (SSP)
// clocks of workers in many processes, kept in etcd under a key prefix:
// the contract of staleness.Clock across processes. A worker may run at
// most maxSkew iterations ahead of the slowest worker that has not left;
// every wait is bounded; a worker whose process dies is seen by its lease.
//
// Each worker's clock is in its key, attached to its lease; every process
// watches the keys, in revision order, and decides locally, from what it
// has seen, whether its worker may go on. Clocks only grow, so a view that
// lags only makes a worker wait longer, never run further ahead than
// maxSkew. A worker that has not joined yet counts as clock 0, as in
// staleness.Clock where every clock starts at 0.
//
// A Clock is safe for use by many goroutines; each worker advances in one
// goroutine at a time. Create it with [NewClock].
type Clock struct {
	g       *group
	maxSkew uint64
}

// NewClock returns a handle on the clocks of workers workers stored under
// prefix, through cli, letting a worker run at most maxSkew iterations
// ahead of the slowest. [WithTimeout] bounds each Advance's wait (the
// max wait of staleness.Clock). It does no I/O: [Clock.Join] does. Fewer
// than one worker, an empty prefix or a nil client panics.
func NewClock(cli *clientv3.Client, prefix string, workers int, maxSkew uint64, opts ...Option) *Clock {
	c := &Clock{g: newGroup(cli, prefix, workers, barrier.ExternalClock, opts), maxSkew: maxSkew}
	c.g.settings = Settings{Kind: "clock", Parties: workers, MaxSkew: maxSkew}
	c.g.needsAnswer = func(m *member, ask string) bool { return m.clock < askPos(ask) }
	c.g.step = func(m *member) int64 { return int64(m.clock) }
	return c
}

// Name returns the clock's name (see [WithName]).
func (c *Clock) Name() string { return c.g.cfg.name }

// Workers returns the number of workers.
func (c *Clock) Workers() int { return c.g.parties }

// Join makes this process worker's holder, with a lease it keeps alive,
// at clock 0. It returns a *[RankTakenError] if another process holds
// the worker, and a *[SettingsMismatchError] if this handle's [Settings]
// (its worker count, its maxSkew) differ from those the clock's first
// Join recorded; either way the worker is not joined. A worker out of
// range, or joined twice, panics.
func (c *Clock) Join(ctx context.Context, worker int) error {
	k := c.g.k
	init := []clientv3.Op{clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.Version(k.ask()), "=", 0)},
		[]clientv3.Op{clientv3.OpPut(k.ask(), "")}, nil)}
	_, err := c.g.join(ctx, worker, init)
	return err
}

// Advance records that worker, joined here, finished an iteration: its
// clock goes from c to c+1 in etcd. It then waits until c+1 minus the
// smallest clock of the workers that have not left is at most maxSkew,
// and returns c+1.
//
// The wait is bounded by ctx and by the clock's timeout. If either ends
// first, Advance returns c+1 and a *[ClockWaitError] that wraps the
// *staleness.WaitError an in-process clock would return (matching
// staleness.ErrWaitTimeout on a timeout) and says why each slow worker is
// slow. A worker waited for whose lease expired can never catch up: the
// wait ends at once, with an error that also matches [ErrLeaseExpired].
// If etcd cannot be reached to record the new clock, Advance returns c
// and a *[UnavailableError]. A worker not joined here, or a nil ctx,
// panics.
func (c *Clock) Advance(ctx context.Context, worker int) (uint64, error) {
	if ctx == nil {
		panic("barrier/etcd: Advance with nil Context")
	}
	g := c.g
	m := g.member(worker)
	if !m.busy.CompareAndSwap(false, true) {
		panic(fmt.Sprintf("barrier/etcd: worker %d advanced by two goroutines at once", worker))
	}
	defer m.busy.Store(false)
	g.mu.Lock()
	now := m.clock + 1
	g.mu.Unlock()
	select {
	case <-m.lost:
		return now - 1, &LeaseLostError{Barrier: g.cfg.name, Rank: worker}
	default:
	}
	m.gid.Store(barrier.Goroutine())
	start := time.Now()
	actx, cancel := context.WithTimeout(ctx, g.cfg.timeout)
	err := c.publish(actx, m, now)
	cancel()
	if err != nil {
		return now - 1, err
	}
	if c.ready(now) {
		return now, nil
	}
	need := now - c.maxSkew
	end := barrier.BeginExternalWait(barrier.ExternalClock, g.cfg.name,
		fmt.Sprintf("worker %d at clock %d waits for every worker to reach clock %d", worker, now, need))
	defer end()
	return now, c.wait(ctx, m, now, start)
}

// publish puts worker m's clock now into its key, if m still holds its
// lease.
func (c *Clock) publish(ctx context.Context, m *member, now uint64) error {
	g := c.g
	g.mu.Lock()
	prev := m.clock
	m.clock = now
	st := g.state(m, false)
	g.mu.Unlock()
	key := g.k.member(m.rank)
	resp, err := g.cli.Txn(ctx).If(clientv3.Compare(clientv3.LeaseValue(key), "=", m.lease)).
		Then(clientv3.OpPut(key, st, clientv3.WithLease(m.lease))).Commit()
	if err == nil && resp.Succeeded {
		return nil
	}
	g.mu.Lock()
	m.clock = prev
	g.mu.Unlock()
	if err != nil {
		return &UnavailableError{Barrier: g.cfg.name, Rank: m.rank, Generation: now, Err: err}
	}
	return &LeaseLostError{Barrier: g.cfg.name, Rank: m.rank}
}

// ready reports whether a worker at clock now may go on, from this
// process's view.
func (c *Clock) ready(now uint64) bool {
	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	_, min := c.slowLocked(0)
	return now-min <= c.maxSkew
}

// slowLocked returns the active workers below need, slowest first, and
// the smallest clock of the active workers. A worker is active unless it
// left; a worker never seen counts at clock 0; a worker whose lease
// expired counts at its last clock. Called with g.mu held.
func (c *Clock) slowLocked(need uint64) ([]staleness.WorkerClock, uint64) {
	g := c.g
	var (
		slow []staleness.WorkerClock
		min  = ^uint64(0)
		any  bool
	)
	for w := range g.parties {
		clk := uint64(0)
		if m := g.members[w]; m != nil {
			clk = m.clock
		} else if p := g.view[w]; p != nil {
			if p.left {
				continue
			}
			clk = p.state.Clock
		}
		any = true
		min = minU(min, clk)
		if clk < need {
			slow = append(slow, staleness.WorkerClock{Worker: w, Clock: clk})
		}
	}
	if !any {
		min = 0
	}
	slices.SortFunc(slow, func(a, b staleness.WorkerClock) int {
		return cmp.Or(cmp.Compare(a.Clock, b.Clock), cmp.Compare(a.Worker, b.Worker))
	})
	return slow, min
}

func minU(a, b uint64) uint64 {
	if a < b {
		return a
	}
	return b
}

// wait blocks worker m, at clock now, until the slowest active worker is
// close enough, a worker it waits for is gone, ctx ends or the timeout
// passes. Halfway, and shortly before the timeout, it asks the slow
// workers what they are doing.
func (c *Clock) wait(ctx context.Context, m *member, now uint64, start time.Time) error {
	g := c.g
	need := now - c.maxSkew
	timeout := g.cfg.timeout
	window := min(timeout/4, 2*time.Second)
	halfway := time.NewTimer(timeout / 2)
	lastAsk := time.NewTimer(timeout - window)
	bound := time.NewTimer(timeout)
	defer halfway.Stop()
	defer lastAsk.Stop()
	defer bound.Stop()
	for {
		changed := g.changes()
		if c.ready(now) {
			return nil
		}
		if dead := c.deadBelow(need); len(dead) > 0 {
			return c.waitError(m, now, start, fmt.Errorf("worker %d: %w", dead[0], ErrLeaseExpired))
		}
		select {
		case <-changed:
		case <-halfway.C:
			g.ask(context.WithoutCancel(ctx), need, 1)
		case <-lastAsk.C:
			g.ask(context.WithoutCancel(ctx), need, 2)
		case <-bound.C:
			return c.waitError(m, now, start, context.DeadlineExceeded)
		case <-ctx.Done():
			return c.waitError(m, now, start, ctx.Err())
		case <-m.lost:
			return &LeaseLostError{Barrier: g.cfg.name, Rank: m.rank}
		}
	}
}

// deadBelow returns the workers below need whose lease expired without
// their leaving: they will never catch up.
func (c *Clock) deadBelow(need uint64) []int {
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []int
	for w, p := range g.view {
		if p.gone && !p.left && g.members[w] == nil && p.state.Clock < need {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}

// waitError builds the error of a wait that ended before the slow
// workers caught up.
func (c *Clock) waitError(m *member, now uint64, start time.Time, cause error) error {
	g := c.g
	need := now - c.maxSkew
	t := time.Now()
	g.mu.Lock()
	slow, _ := c.slowLocked(need)
	ranks := make([]int, len(slow))
	for i, w := range slow {
		ranks[i] = w.Worker
	}
	why := g.whyLocked(ranks, need, "clock", t)
	g.mu.Unlock()
	return &ClockWaitError{
		Wait: &staleness.WaitError{Worker: m.rank, Clock: now, Need: need, Slowest: slow, Waited: t.Sub(start), Err: cause},
		Why:  why,
	}
}

// Leave removes worker, joined here, from the clock for good: its clock
// no longer holds the others back. It records the departure in etcd,
// then revokes the worker's lease. Leaving twice does nothing.
func (c *Clock) Leave(ctx context.Context, worker int) error {
	g := c.g
	m := g.member(worker)
	g.mu.Lock()
	if m.closing {
		g.mu.Unlock()
		return nil
	}
	m.closing = true
	st := g.state(m, true)
	g.mu.Unlock()
	key := g.k.member(worker)
	_, err := g.cli.Txn(ctx).If(clientv3.Compare(clientv3.LeaseValue(key), "=", m.lease)).
		Then(clientv3.OpPut(g.k.left(worker), "left"), clientv3.OpPut(key, st, clientv3.WithLease(m.lease))).Commit()
	if err != nil {
		return fmt.Errorf("barrier/etcd: leave: %w", err)
	}
	m.kaCancel()
	if _, err := g.cli.Revoke(ctx, m.lease); err != nil {
		return fmt.Errorf("barrier/etcd: leave: %w", err)
	}
	return nil
}

// Close revokes the leases of the workers joined here (the others see
// them leave) and stops watching; if no worker remains in etcd, it
// deletes every key under the prefix. It waits at most the decide
// timeout for etcd. Closing twice does nothing.
func (c *Clock) Close() error { return c.g.close() }
