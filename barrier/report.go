package barrier

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncwatch/syncwatch/lockorder"
)

// The violation kinds the barrier reports through lockorder's pipeline, so
// that handlers, lockorder.Violations, lockordertest and spans see them.
const (
	// KindBroken: a generation broke. Breaks asked for (Abort) or caused
	// by a canceled context are marked Expected.
	KindBroken lockorder.Kind = "barrier-broken"
	// KindSlow: half a waiter's bound passed with ranks still missing. It
	// is the early warning, made once per generation and marked Expected.
	KindSlow lockorder.Kind = "barrier-slow"
	// KindLockHeld: a goroutine waited at a barrier while holding a
	// lockorder lock. A rank that needs the lock to arrive never will.
	KindLockHeld lockorder.Kind = "lock-held-at-barrier"
)

const source = "barrier"

// reportHistory is how many generations of the flight recorder a
// broken-generation violation's Detail shows. Reports are kept (up to
// lockorder's bound), so they stay small; the BrokenError has them all.
const reportHistory = 8

// reportBroken hands a broken generation to the report pipeline. Called
// with no lock held.
func (b *Barrier) reportBroken(ctx context.Context, err *BrokenError, gid int64) {
	if lockorder.CurrentMode() == lockorder.ModeOff {
		return
	}
	lockorder.ReportContext(ctx, lockorder.Violation{
		Kind:      err.kind(),
		Source:    source,
		Message:   "barrier " + err.summary(),
		Goroutine: gid,
		Stack:     lockorder.CallerStack(),
		Waited:    err.Waited,
		Detail:    err.body(reportHistory),
		Expected:  errors.Is(err.Cause, ErrAborted) || errors.Is(err.Cause, context.Canceled),
		Err:       err,
		Attrs:     brokenAttrs(err),
	})
}

// maxAttrRanks bounds the ranks a list-of-ranks attribute holds: a span
// attribute of a million ranks would slow the break and exceed what
// exporters send. The *_count attributes give the full numbers.
const maxAttrRanks = 1024

// rankAttr is an attribute listing ranks, at most maxAttrRanks of them.
func rankAttr(key string, ranks []int) attribute.KeyValue {
	return attribute.IntSlice(key, ranks[:min(len(ranks), maxAttrRanks)])
}

func brokenAttrs(e *BrokenError) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String("syncwatch.barrier.name", e.Barrier),
		attribute.Int64("syncwatch.barrier.generation", int64(e.Generation)),
		attribute.Int("syncwatch.barrier.parties", e.Parties),
		attribute.Int("syncwatch.barrier.arrived_count", len(e.Arrived)),
		rankAttr("syncwatch.barrier.arrived", e.Arrived),
		attribute.Int("syncwatch.barrier.missing_count", len(e.Missing)),
		rankAttr("syncwatch.barrier.missing", e.Missing),
		attribute.Int("syncwatch.barrier.broken_by", e.BrokenBy),
	}
	if e.Cause != nil {
		attrs = append(attrs, attribute.String("syncwatch.barrier.cause", e.Cause.Error()))
	}
	if len(e.Left) > 0 {
		attrs = append(attrs, rankAttr("syncwatch.barrier.left", e.Left))
	}
	if len(e.Why) > 0 {
		why := make([]string, len(e.Why))
		for i, m := range e.Why {
			why[i] = m.String()
		}
		attrs = append(attrs, attribute.StringSlice("syncwatch.barrier.why", why))
	}
	return attrs
}

// warn makes g's slow report, unless g finished or another waiter made it:
// half of a waiter's bound has passed with ranks missing. It returns the
// attributes of the "syncwatch.barrier.slow" event it added to the span in
// ctx, nil if it made no report.
func (b *Barrier) warn(ctx context.Context, g *generation, gid int64) []attribute.KeyValue {
	now := time.Now()
	b.mu.Lock()
	if g.state != pending || g.warned {
		b.mu.Unlock()
		return nil
	}
	g.warned = true
	missing, left, never := b.absentLocked(g)
	why := b.whyLocked(g, missing, never)
	arrived, waited := len(g.arrivals), now.Sub(g.start())
	b.mu.Unlock()

	msg := fmt.Sprintf("barrier %s generation %d: %d/%d arrived, missing %s after %v",
		b.cfg.name, g.num, arrived, b.parties, rankList(missing), waited.Round(time.Millisecond))
	if len(left) > 0 {
		msg += ", left " + rankList(left)
	}
	attrs := []attribute.KeyValue{
		attribute.String("syncwatch.barrier.name", b.cfg.name),
		attribute.Int64("syncwatch.barrier.generation", int64(g.num)),
		attribute.Int("syncwatch.barrier.parties", b.parties),
		attribute.Int("syncwatch.barrier.arrived_count", arrived),
		attribute.Int("syncwatch.barrier.missing_count", len(missing)),
		rankAttr("syncwatch.barrier.missing", missing),
		attribute.String("syncwatch.barrier.message", msg),
	}
	trace.SpanFromContext(ctx).AddEvent("syncwatch.barrier.slow", trace.WithAttributes(attrs...))
	var detail strings.Builder
	for _, m := range why {
		fmt.Fprintf(&detail, "%s\n", m)
	}
	never, other := unexplained(len(missing), why, never)
	for _, c := range unexplainedClauses(len(why) > 0, never, other) {
		fmt.Fprintf(&detail, "%s\n", c)
	}
	lockorder.ReportContext(ctx, lockorder.Violation{
		Kind:      KindSlow,
		Source:    source,
		Message:   msg,
		Goroutine: gid,
		Waited:    waited,
		Detail:    detail.String(),
		Expected:  true,
		Attrs:     attrs,
	})
	return attrs
}

// reportLockHeld reports that rank waits at the barrier holding locks.
func (b *Barrier) reportLockHeld(ctx context.Context, rank int, gid int64, held []lockorder.LockRef) {
	names := make([]string, len(held))
	for i, l := range held {
		names[i] = l.Name
	}
	list := strings.Join(names, ", ")
	lockorder.ReportContext(ctx, lockorder.Violation{
		Kind:      KindLockHeld,
		Source:    source,
		Message:   fmt.Sprintf("waiting at barrier %s while holding %s", b.cfg.name, list),
		Goroutine: gid,
		Stack:     lockorder.CallerStack(),
		Locks:     held,
		Detail: fmt.Sprintf("rank %d (goroutine %d) waits at barrier %s holding %s. A rank that needs "+
			"the lock before it can arrive never will, and the generation can only break by timeout. "+
			"Release locks before Await.", rank, gid, b.cfg.name, list),
		Attrs: []attribute.KeyValue{
			attribute.String("syncwatch.barrier.name", b.cfg.name),
			attribute.Int("syncwatch.barrier.rank", rank),
			attribute.StringSlice("syncwatch.barrier.held_locks", names),
		},
	})
}
