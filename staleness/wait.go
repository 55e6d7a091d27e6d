package staleness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/internal/waitfor"
	"github.com/syncwatch/syncwatch/lockorder"
	"go.opentelemetry.io/otel/attribute"
)

// KindClockWaitTimeout is the lockorder violation kind reported when an
// Advance times out waiting for slower workers.
const KindClockWaitTimeout lockorder.Kind = "clock-wait-timeout"

// wait blocks the Advance of worker, now at clock now, until the slowest
// active worker is close enough, the worker leaves, ctx ends or the max
// wait runs out. ch is the broadcast channel current when mu was released.
func (c *Clock) wait(ctx context.Context, worker int, now uint64, ch <-chan struct{}, gid int64) (uint64, error) {
	start := time.Now()
	w := waitfor.Begin(&waitfor.Wait{
		Goroutine: gid,
		Kind:      waitfor.KindClock,
		Object:    c.name,
		ObjectID:  c.id,
		Detail:    fmt.Sprintf("worker %d at clock %d waits for every worker to reach clock %d", worker, now, now-c.maxSkew),
		Bounded:   true,
	})
	defer waitfor.End(w)
	timer := time.NewTimer(c.maxWait)
	defer timer.Stop()
	for {
		var cause error
		select {
		case <-ch:
		case <-ctx.Done():
			cause = ctx.Err()
		case <-timer.C:
			cause = context.DeadlineExceeded
		}
		c.mu.Lock()
		if c.left[worker] {
			c.mu.Unlock()
			return now, &LeftError{Worker: worker, Clock: now}
		}
		if c.ready(now) {
			c.mu.Unlock()
			return now, nil
		}
		if cause == nil {
			ch = c.waitChan()
			c.mu.Unlock()
			continue
		}
		err := &WaitError{Worker: worker, Clock: now, Need: now - c.maxSkew, Slowest: c.behind(now - c.maxSkew), Err: cause}
		gids := make(map[int]int64, len(err.Slowest))
		for _, w := range err.Slowest {
			gids[w.Worker] = c.gids[w.Worker]
		}
		c.mu.Unlock()
		err.Waited = time.Since(start)
		if errors.Is(cause, context.DeadlineExceeded) {
			c.reportTimeout(ctx, gid, err, gids)
		}
		return now, err
	}
}

// behind lists the active workers whose clock is below need, slowest
// first. Called with mu held.
func (c *Clock) behind(need uint64) []WorkerClock {
	var out []WorkerClock
	for w, clk := range c.clocks {
		if !c.left[w] && clk < need {
			out = append(out, WorkerClock{Worker: w, Clock: clk})
		}
	}
	slices.SortFunc(out, func(a, b WorkerClock) int {
		return cmp.Or(cmp.Compare(a.Clock, b.Clock), cmp.Compare(a.Worker, b.Worker))
	})
	return out
}

// reportTimeout hands a timed-out wait to lockorder's report pipeline. The
// Detail says, for each worker waited for, what its goroutine is doing now
// if it is in a syncwatch wait (a lock, another clock): the usual reason a
// worker stops advancing. It runs with no lock held.
func (c *Clock) reportTimeout(ctx context.Context, gid int64, err *WaitError, gids map[int]int64) {
	var detail strings.Builder
	for _, w := range err.Slowest {
		g := gids[w.Worker]
		switch wt := waitfor.Lookup(g); {
		case g == 0:
			fmt.Fprintf(&detail, "worker %d (clock %d) has not advanced yet\n", w.Worker, w.Clock)
		case g == gid:
			fmt.Fprintf(&detail, "worker %d (clock %d) last advanced on this goroutine, which is the one waiting\n", w.Worker, w.Clock)
		case wt != nil:
			fmt.Fprintf(&detail, "worker %d (clock %d, goroutine %d) is waiting for %s", w.Worker, w.Clock, g, waitfor.Describe(wt))
			if h := wt.Holder(); h != 0 {
				fmt.Fprintf(&detail, ", held by goroutine %d", h)
			}
			detail.WriteString("\n")
		default:
			fmt.Fprintf(&detail, "worker %d (clock %d) last advanced on goroutine %d, which is not in a syncwatch wait\n", w.Worker, w.Clock, g)
		}
	}
	slowest := make([]int64, len(err.Slowest))
	for i, w := range err.Slowest {
		slowest[i] = int64(w.Worker)
	}
	lockorder.ReportContext(ctx, lockorder.Violation{
		Kind:   KindClockWaitTimeout,
		Source: "staleness",
		Message: fmt.Sprintf("%s: worker %d at clock %d timed out after %v waiting for %s to reach clock %d",
			c.name, err.Worker, err.Clock, err.Waited.Round(time.Millisecond), formatWorkers(err.Slowest, 8), err.Need),
		Goroutine: gid,
		Stack:     lockorder.CallerStack(),
		Waited:    err.Waited,
		Detail:    detail.String(),
		Err:       err,
		Attrs: []attribute.KeyValue{
			attribute.Int("syncwatch.worker", err.Worker),
			attribute.Int64("syncwatch.clock", int64(err.Clock)),
			attribute.Int64("syncwatch.clock.need", int64(err.Need)),
			attribute.Int64("syncwatch.clock.max_skew", int64(c.maxSkew)),
			attribute.Int64Slice("syncwatch.clock.slowest_workers", slowest),
		},
	})
}
