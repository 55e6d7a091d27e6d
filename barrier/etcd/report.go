package etcd

import (
	"context"
	"errors"

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
