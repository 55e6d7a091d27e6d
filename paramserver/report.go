package paramserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/staleness"
)

// The lockorder violation kinds the server reports.
const (
	// KindStaleRejected: a gradient was rejected as too stale. It is
	// reported as Expected: asynchronous training produces stale
	// gradients, and rejecting them is the server doing its job.
	KindStaleRejected lockorder.Kind = "stale-gradient-rejected"
	// KindFutureRejected: a gradient claimed a base version the server
	// has not reached. No worker can have read such a version, so this is
	// a bug in the caller and is not Expected.
	KindFutureRejected lockorder.Kind = "future-gradient-rejected"
	// KindVersionRegression: Get returned to a worker a version older
	// than one it returned before: a bug in the server.
	KindVersionRegression lockorder.Kind = "version-regression"
)

// accepted counts an accepted gradient.
func (s *Server) accepted(ctx context.Context, ws *workerState, staleness uint64) {
	ws.accepted.Add(1)
	ws.observe(staleness)
	s.tel.count(ctx, ws, outAccepted, staleness, true)
}

// rejected counts, traces and reports a rejected gradient of worker,
// whose state is ws. It runs with no lock held.
func (s *Server) rejected(ctx context.Context, worker int, ws *workerState, base uint64, err error) {
	var se *staleness.StaleError
	attrs := []attribute.KeyValue{
		attribute.String("syncwatch.paramserver", s.name),
		attribute.Int("syncwatch.worker", worker),
		attribute.Int64("syncwatch.version.base", i64(base)),
	}
	switch {
	case errors.As(err, &se) && se.Future():
		ws.future.Add(1)
		s.tel.count(ctx, ws, outFuture, 0, false)
	case se != nil:
		ws.tooStale.Add(1)
		ws.observe(se.Staleness)
		s.tel.count(ctx, ws, outTooStale, se.Staleness, true)
	case errors.Is(err, ErrNonFinite):
		ws.nonFinite.Add(1)
		s.tel.count(ctx, ws, outNonFinite, 0, false)
	default:
		ws.shape.Add(1)
		s.tel.count(ctx, ws, outShape, 0, false)
	}
	if se != nil {
		attrs = append(attrs,
			attribute.Int64("syncwatch.version", i64(se.Current)),
			attribute.Int64("syncwatch.staleness", i64(se.Staleness)),
			attribute.Int64("syncwatch.staleness.bound", i64(se.Max)))
	}
	var typed interface{ ErrorType() string }
	if errors.As(err, &typed) {
		attrs = append(attrs, attribute.String("error.type", typed.ErrorType()))
	}
	ctx, span := s.tel.tracer.Start(ctx, "paramserver.Apply", trace.WithAttributes(attrs...))
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
	if se != nil {
		lockorder.ReportContext(ctx, s.rejection(worker, se, attrs))
	}
	span.End()
}

// rejection builds the report of a rejected gradient. Its message names
// the server, the worker and a band of staleness (or of how far ahead),
// because the report pipeline keeps one report per distinct message: one
// per worker and band, the first one's figures in Err and Detail, so that
// a long run with many workers cannot flood the store, which is shared
// with real bugs. Every rejection is still counted in Stats and metrics
// and has its own span.
func (s *Server) rejection(worker int, se *staleness.StaleError, attrs []attribute.KeyValue) lockorder.Violation {
	v := lockorder.Violation{
		Source:    "paramserver",
		Goroutine: goid.ID(),
		Err:       se,
		Attrs:     attrs,
		Detail:    se.Error() + "\n(one report per worker and band; Server.Stats counts every rejection)",
	}
	if se.Future() {
		v.Kind = KindFutureRejected
		v.Message = fmt.Sprintf("%s: worker %d: gradient computed on a version %s ahead of the server",
			s.name, worker, band(se.Ahead(), 0))
		v.Stack = lockorder.CallerStack()
		return v
	}
	v.Kind = KindStaleRejected
	v.Expected = true
	v.Message = fmt.Sprintf("%s: worker %d: gradient staleness %s exceeds bound %d",
		s.name, worker, band(se.Staleness-se.Max, se.Max), se.Max)
	return v
}

// band names the power-of-two band of excess (at least 1), offset by
// base: 1 is "base+1", 2 and 3 are "base+2-base+3", 4 to 7 the next band.
func band(excess, base uint64) string {
	lo := uint64(1) << (bits.Len64(excess) - 1)
	hi := lo<<1 - 1
	if lo == 1<<63 {
		hi = math.MaxUint64
	}
	if lo == hi {
		return fmt.Sprint(sat(base, lo))
	}
	return fmt.Sprintf("%d-%d", sat(base, lo), sat(base, hi))
}

// sat returns a+b, saturating.
func sat(a, b uint64) uint64 {
	if s, carry := bits.Add64(a, b, 0); carry == 0 {
		return s
	}
	return math.MaxUint64
}

// reportRegression reports that Get returned version v to worker after
// version last. One report per server and worker.
func (s *Server) reportRegression(worker int, last, v uint64) {
	lockorder.Report(lockorder.Violation{
		Kind:      KindVersionRegression,
		Source:    "paramserver",
		Message:   fmt.Sprintf("%s: worker %d read a version older than one it read before", s.name, worker),
		Detail:    fmt.Sprintf("Get returned version %d after version %d", v, last),
		Goroutine: goid.ID(),
		Stack:     lockorder.CallerStack(),
		Attrs: []attribute.KeyValue{
			attribute.String("syncwatch.paramserver", s.name),
			attribute.Int("syncwatch.worker", worker),
			attribute.Int64("syncwatch.version", i64(v)),
			attribute.Int64("syncwatch.version.previous", i64(last)),
		},
	})
}
