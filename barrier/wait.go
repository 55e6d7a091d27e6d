package barrier

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// wait blocks until g finishes, ctx ends or g's deadline passes. Halfway
// through the bound (the generation's, or ctx's if sooner) it makes the
// generation's slow report, if no other waiter has.
func (b *Barrier) wait(ctx context.Context, g *generation, rank int, gid int64, start time.Time) (gen uint64, err error) {
	var buf [64]byte
	detail := append(buf[:0], "rank "...)
	detail = strconv.AppendInt(detail, int64(rank), 10)
	detail = append(detail, ", generation "...)
	detail = strconv.AppendUint(detail, g.num, 10)
	reg := waitfor.Begin(&waitfor.Wait{
		Goroutine: gid, Kind: waitfor.KindBarrier, Object: b.cfg.name, ObjectID: b.id,
		Detail: string(detail), Bounded: true,
		Blockers: func(dst []int64) []int64 { return b.missingGoroutines(g, dst) },
	})
	var (
		slow     []attribute.KeyValue // the slow report this waiter made
		slowAt   time.Time
		returned bool
	)
	defer func() {
		waitfor.End(reg)
		if !returned {
			// A violation handler panicked or the goroutine exited: the
			// rank abandoned its wait, so the generation cannot complete.
			b.abandon(ctx, g, rank, gid)
			return
		}
		b.tel.waited(ctx, rank, g.num, start, slow, slowAt, err)
	}()

	// A context deadline sooner than g's bounds this waiter alone, through
	// ctx.Done; it gets a halfway mark of its own.
	var halfway <-chan time.Time
	if d, ok := ctx.Deadline(); ok && d.Before(g.deadline) {
		t := time.NewTimer(d.Sub(start) / 2)
		defer t.Stop()
		halfway = t.C
	}
	for {
		select {
		case <-g.done:
			returned = true
			if err := g.result(); err != nil {
				return g.num, err
			}
			learnGeneration(g)
			return g.num, nil
		case <-ctx.Done():
			testHook()
			err := b.giveUp(ctx, g, rank, gid, ctxCause(ctx, rank))
			returned = true
			return g.num, err
		case <-halfway:
			halfway = nil
			if s := b.warn(ctx, g, gid); s != nil {
				slow, slowAt = s, time.Now()
			}
		case <-g.timer.C:
			// Only one waiter receives each tick of g's timer.
			if s, expired := b.tick(ctx, g, gid); !expired {
				if s != nil {
					slow, slowAt = s, time.Now()
				}
				continue
			}
			testHook()
			err := b.giveUp(ctx, g, g.firstRank, gid,
				fmt.Errorf("rank %d timed out after %v: %w", g.firstRank, b.cfg.timeout, context.DeadlineExceeded))
			returned = true
			return g.num, err
		}
	}
}

// tick handles a tick of g's timer: the first is the halfway mark, which
// rearms the timer for the deadline and makes the slow report; the second
// is the deadline. It reports whether the deadline passed.
func (b *Barrier) tick(ctx context.Context, g *generation, gid int64) (slow []attribute.KeyValue, expired bool) {
	b.mu.Lock()
	if g.state == completed || g.state == broken {
		b.mu.Unlock()
		return nil, false // g.done is closed: the waiter sees it next
	}
	if g.halfway {
		b.mu.Unlock()
		return nil, true
	}
	g.halfway = true
	g.timer.Reset(time.Until(g.deadline))
	b.mu.Unlock()
	return b.warn(ctx, g, gid), false
}

// testHookGiveUp, when set by a test, runs when a waiter has noticed the
// end of its wait and before it looks at its generation.
var testHookGiveUp atomic.Pointer[func()]

func testHook() {
	if h := testHookGiveUp.Load(); h != nil {
		(*h)()
	}
}

// result returns the outcome of a finished generation.
func (g *generation) result() error {
	if g.state == broken {
		return g.err
	}
	return nil
}

// ctxCause describes why ctx ended: its error, and its cause if different.
func ctxCause(ctx context.Context, rank int) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause != nil && cause != err {
		return fmt.Errorf("rank %d: %w: %w", rank, err, cause)
	}
	return fmt.Errorf("rank %d: %w", rank, err)
}

// giveUp ends rank's wait for g with cause. If g finished first, its
// outcome stands; otherwise g breaks.
func (b *Barrier) giveUp(ctx context.Context, g *generation, rank int, gid int64, cause error) error {
	now := time.Now()
	b.mu.Lock()
	if g.state == completed || g.state == broken {
		b.mu.Unlock()
		return g.result()
	}
	err := b.breakLocked(g, cause, rank, now)
	b.mu.Unlock()
	b.reportBroken(ctx, err, gid)
	return err
}

// abandon breaks g for a waiter that left Await by panicking.
func (b *Barrier) abandon(ctx context.Context, g *generation, rank int, gid int64) {
	b.giveUp(ctx, g, rank, gid, fmt.Errorf("rank %d left Await without returning (a panic or runtime.Goexit)", rank))
}

// maxBlockers bounds how many goroutines of missing ranks a wait names to
// the wait-for graph.
const maxBlockers = 64

// missingGoroutines appends to dst the goroutines of the latest arrivals
// of ranks missing from g, the ranks the wait-for graph says a waiter at
// g needs, at most maxBlockers of them. Ranks that never arrived have no
// goroutine to name. It takes b.mu, a leaf: the graph calls it with no
// lock held.
//
// Finding the missing ranks reads the whole rank table, so the answer is
// kept for a while: every waiter of a wide barrier asks the same question.
func (b *Barrier) missingGoroutines(g *generation, dst []int64) []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if g.state != pending {
		return dst
	}
	if now := time.Now(); now.Sub(g.blockersAt) > blockersFor {
		g.blockers = g.blockers[:0]
		missing, _, _ := b.absentLocked(g)
		for _, r := range missing {
			if len(g.blockers) >= maxBlockers {
				break
			}
			if gid := b.ranks.get(r).gid; gid != 0 {
				g.blockers = append(g.blockers, gid)
			}
		}
		g.blockersAt = now
	}
	return append(dst, g.blockers...)
}

// blockersFor is how long missingGoroutines's answer is kept.
const blockersFor = 100 * time.Millisecond
