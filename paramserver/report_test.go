//go:build !syncwatch_off

package paramserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
	"github.com/syncwatch/syncwatch/paramserver"
	"github.com/syncwatch/syncwatch/staleness"
)

// reports returns the violations of kind k about server s.
func reports(s *paramserver.Server, k lockorder.Kind) []lockorder.Violation {
	var out []lockorder.Violation
	for _, v := range lockorder.Violations() {
		if v.Kind == k && strings.HasPrefix(v.Message, s.String()+":") {
			out = append(out, v)
		}
	}
	return out
}

func TestStaleRejectionIsReportedAsExpected(t *testing.T) {
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithMaxStaleness(10), paramserver.WithWorkers(32))
	advance(t, s, 100, paramserver.Params{"w": {1}})
	_, err := s.Apply(context.Background(), 23, paramserver.Params{"w": {1}}, 85)
	require.ErrorIs(t, err, staleness.ErrTooStale)

	lockordertest.VerifyNone(t) // expected: does not fail
	vs := reports(s, paramserver.KindStaleRejected)
	require.Len(t, vs, 1)
	v := vs[0]
	assert.True(t, v.Expected)
	assert.Equal(t, "paramserver", v.Source)
	assert.Equal(t, s.String()+": worker 23: gradient staleness 14-17 exceeds bound 10", v.Message)
	var se *staleness.StaleError
	require.ErrorAs(t, v.Err, &se)
	assert.Equal(t, uint64(15), se.Staleness, "the figures of the first occurrence")
	assert.Contains(t, v.Detail, "staleness 15 exceeds bound 10")
	a := attrs(v.Attrs)
	assert.Equal(t, int64(15), a["syncwatch.staleness"].AsInt64())
	assert.Equal(t, int64(10), a["syncwatch.staleness.bound"].AsInt64())
	assert.Equal(t, int64(23), a["syncwatch.worker"].AsInt64())

	err = lockordertest.Find(lockordertest.IncludeExpected(), lockordertest.IncludeReported())
	require.Error(t, err, "counted when asked")
	assert.Contains(t, err.Error(), "stale-gradient-rejected")
}

// TestRejectionReportsAreBanded: one report per worker and power-of-two
// band of staleness past the bound, so that volume stays bounded.
func TestRejectionReportsAreBanded(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithMaxStaleness(10), paramserver.WithWorkers(64))
	advance(t, s, 200, paramserver.Params{"w": {1}})
	ctx := context.Background()
	for _, tc := range []struct {
		worker    int
		staleness uint64
	}{
		{1, 11}, {1, 11}, // band 11
		{1, 12}, {1, 13}, // band 12-13
		{1, 14}, {1, 15}, {1, 17}, // band 14-17
		{1, 18}, {1, 25}, // band 18-25
		{1, 190}, // band 138-265
		{2, 15},  // another worker
	} {
		_, err := s.Apply(ctx, tc.worker, paramserver.Params{"w": {1}}, s.Version()-tc.staleness)
		require.ErrorIs(t, err, staleness.ErrTooStale)
	}
	var msgs []string
	for _, v := range reports(s, paramserver.KindStaleRejected) {
		msgs = append(msgs, strings.TrimPrefix(v.Message, s.String()+": "))
	}
	assert.Equal(t, []string{
		"worker 1: gradient staleness 11 exceeds bound 10",
		"worker 1: gradient staleness 12-13 exceeds bound 10",
		"worker 1: gradient staleness 14-17 exceeds bound 10",
		"worker 1: gradient staleness 18-25 exceeds bound 10",
		"worker 1: gradient staleness 138-265 exceeds bound 10",
		"worker 2: gradient staleness 14-17 exceeds bound 10",
	}, msgs)
	assert.Equal(t, uint64(11), s.Stats().Total().TooStale, "every rejection is counted even when not reported")

	// 64 workers rejecting at every staleness up to 200 past the bound
	// make at most 64 x 8 reports.
	for w := range 64 {
		for d := uint64(11); d <= 190; d++ {
			_, _ = s.Apply(ctx, w, paramserver.Params{"w": {1}}, s.Version()-d)
		}
	}
	assert.LessOrEqual(t, len(reports(s, paramserver.KindStaleRejected)), 64*8)
}

func TestFutureRejectionIsABug(t *testing.T) {
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithWorkers(4))
	_, err := s.Apply(context.Background(), 3, paramserver.Params{"w": {1}}, 2)
	require.ErrorIs(t, err, staleness.ErrFutureVersion)

	vs := reports(s, paramserver.KindFutureRejected)
	require.Len(t, vs, 1)
	v := vs[0]
	assert.False(t, v.Expected, "no worker can have read a future version")
	assert.Equal(t, s.String()+": worker 3: gradient computed on a version 2-3 ahead of the server", v.Message)
	require.NotEmpty(t, v.Stack)
	assert.Contains(t, v.Stack[0].Function, "TestFutureRejectionIsABug", "the stack starts at the caller of Apply")

	err = lockordertest.Find()
	require.Error(t, err, "VerifyNone would fail on it")
	assert.Contains(t, err.Error(), "future-gradient-rejected")
}

func TestVersionRegressionIsReported(t *testing.T) {
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithWorkers(2))
	advance(t, s, 3, paramserver.Params{"w": {1}})
	assert.Equal(t, uint64(3), s.Get(1).Version)
	paramserver.Rewind(s, 2) // simulate a server bug
	assert.Equal(t, uint64(2), s.Get(1).Version)
	assert.Equal(t, uint64(2), s.Get(0).Version, "worker 0 never read 3: no regression for it")

	vs := reports(s, paramserver.KindVersionRegression)
	require.Len(t, vs, 1)
	v := vs[0]
	assert.False(t, v.Expected)
	assert.Equal(t, s.String()+": worker 1 read a version older than one it read before", v.Message)
	assert.Equal(t, "Get returned version 2 after version 3", v.Detail)
	require.NotEmpty(t, v.Stack)
	assert.Contains(t, v.Stack[0].Function, "TestVersionRegressionIsReported")
	require.Error(t, lockordertest.Find())
}

// TestRejectionSpanFromReportPipeline: the lockorder report of a stale
// gradient is a "stale-gradient-rejected" span with status Error, the
// child of the rejection's "paramserver.Apply" span.
func TestRejectionSpanFromReportPipeline(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	lockorder.Configure(lockorder.WithTracerProvider(tp))
	defer lockorder.Configure(lockorder.WithTracerProvider(otel.GetTracerProvider()))

	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithMaxStaleness(2), paramserver.WithTracerProvider(tp))
	advance(t, s, 10, paramserver.Params{"w": {1}})
	_, err := s.Apply(context.Background(), 0, paramserver.Params{"w": {1}}, 5)
	require.ErrorIs(t, err, staleness.ErrTooStale)

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, sp := range rec.Ended() {
		byName[sp.Name()] = sp
	}
	parent, ok := byName["paramserver.Apply"]
	require.True(t, ok)
	child, ok := byName["stale-gradient-rejected"]
	require.True(t, ok)
	assert.Equal(t, codes.Error, child.Status().Code)
	assert.Equal(t, parent.SpanContext().SpanID(), child.Parent().SpanID())
	a := attrs(child.Attributes())
	assert.Equal(t, "paramserver", a["syncwatch.source"].AsString())
	assert.Equal(t, int64(5), a["syncwatch.staleness"].AsInt64())
	assert.Equal(t, int64(2), a["syncwatch.staleness.bound"].AsInt64())
	assert.Equal(t, int64(0), a["syncwatch.worker"].AsInt64())
}
