package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
)

// reportSource is the Source of the violations this package reports.
const reportSource = "barrier/etcd"

// reportBroken hands a broken generation to lockorder's report pipeline,
// as barrier.Barrier does, so that handlers, lockorder.Violations and
// lockordertest see it: a collective mismatch as
// barrier.KindCollectiveMismatch, any other break as barrier.KindBroken.
// Breaks caused by a canceled context are marked Expected.
func reportBroken(ctx context.Context, be *barrier.BrokenError) {
	if lockorder.CurrentMode() == lockorder.ModeOff {
		return
	}
	kind := barrier.KindBroken
	if errors.Is(be, barrier.ErrCollectiveMismatch) {
		kind = barrier.KindCollectiveMismatch
	}
	lockorder.ReportContext(ctx, lockorder.Violation{
		Kind:     kind,
		Source:   reportSource,
		Message:  be.Error(),
		Waited:   be.Waited,
		Detail:   be.Report(),
		Expected: errors.Is(be.Cause, context.Canceled),
		Err:      be,
		Attrs: []attribute.KeyValue{
			attribute.String("syncwatch.barrier.name", be.Barrier),
			attribute.Int64("syncwatch.barrier.generation", int64(be.Generation)),
			attribute.Int("syncwatch.barrier.parties", be.Parties),
			attribute.Int("syncwatch.barrier.missing_count", len(be.Missing)),
			attribute.Int("syncwatch.barrier.broken_by", be.BrokenBy),
		},
	})
}

// reportLockHeld reports that rank waits at the barrier holding locks, as
// barrier.Barrier does.
func reportLockHeld(ctx context.Context, name string, rank int, gid int64, held []lockorder.LockRef) {
	names := make([]string, len(held))
	for i, l := range held {
		names[i] = l.Name
	}
	list := strings.Join(names, ", ")
	lockorder.ReportContext(ctx, lockorder.Violation{
		Kind:      barrier.KindLockHeld,
		Source:    reportSource,
		Message:   fmt.Sprintf("waiting at barrier %s while holding %s", name, list),
		Goroutine: gid,
		Stack:     lockorder.CallerStack(),
		Locks:     held,
		Detail: fmt.Sprintf("rank %d (goroutine %d) waits at barrier %s holding %s. A rank that needs "+
			"the lock before it can arrive never will, and the generation can only break by timeout. "+
			"Release locks before Await.", rank, gid, name, list),
		Attrs: []attribute.KeyValue{
			attribute.String("syncwatch.barrier.name", name),
			attribute.Int("syncwatch.barrier.rank", rank),
			attribute.StringSlice("syncwatch.barrier.held_locks", names),
		},
	})
}
