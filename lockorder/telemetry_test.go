//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/syncwatch/syncwatch/lockorder"
)

func recorderProvider(t *testing.T) *tracetest.SpanRecorder {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	lockorder.Configure(lockorder.WithTracerProvider(tp))
	t.Cleanup(func() {
		lockorder.Configure(lockorder.WithTracerProvider(sdktrace.NewTracerProvider()))
		_ = tp.Shutdown(t.Context())
	})
	return rec
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestCycleYieldsOneErrorSpan(t *testing.T) {
	fresh(t)
	rec := recorderProvider(t)
	a, b := lockorder.NewMutex("spanA"), lockorder.NewMutex("spanB")
	run(func() { lockAB(a, b) })
	for range 3 {
		run(func() { lockAB(b, a) })
	}
	spans := rec.Ended()
	require.Len(t, spans, 1)
	s := spans[0]
	assert.Equal(t, "lock-order-cycle", s.Name())
	assert.Equal(t, codes.Error, s.Status().Code)
	assert.Equal(t, lockorder.ScopeName, s.InstrumentationScope().Name)
	assert.Equal(t, lockorder.Version, s.InstrumentationScope().Version)
	at := attrs(s)
	assert.Equal(t, "lock-order-cycle", at["syncwatch.kind"].AsString())
	assert.ElementsMatch(t, []string{"spanA", "spanB"}, at["syncwatch.lock.names"].AsStringSlice())
	assert.Equal(t, []string{"spanB -> spanA", "spanA -> spanB"}, at["syncwatch.cycle.edges"].AsStringSlice())
	assert.Contains(t, at["code.stacktrace"].AsString(), "lockAB")
	require.Len(t, s.Events(), 1, "RecordError adds an exception event")
	assert.Equal(t, "exception", s.Events()[0].Name)
}

func TestLongWaitYieldsLockWaitSpan(t *testing.T) {
	fresh(t)
	rec := recorderProvider(t)
	lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace), lockorder.WithWaitThreshold(10*time.Millisecond))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithWaitThreshold(10 * time.Millisecond)) })
	m := lockorder.NewMutex("slow")

	m.Lock()
	m.Unlock()
	assert.Empty(t, rec.Ended(), "an uncontended Lock makes no span")
	assert.Zero(t, testing.AllocsPerRun(100, func() { m.Lock(); m.Unlock() }))

	m.Lock()
	go func() {
		waitingOn(t, "slow", 1)
		time.Sleep(50 * time.Millisecond) // the wait outlasts the threshold
		m.Unlock()
	}()
	m.Lock()
	m.Unlock()
	spans := rec.Ended()
	require.Len(t, spans, 1)
	assert.Equal(t, "lock wait", spans[0].Name())
	at := attrs(spans[0])
	assert.Equal(t, "slow#"+suffix(at["syncwatch.lock.name"].AsString()), at["syncwatch.lock.name"].AsString())
	assert.Equal(t, "slow", at["syncwatch.lock.class"].AsString())
	assert.GreaterOrEqual(t, at["syncwatch.wait.duration_ns"].AsInt64(), int64(40*time.Millisecond))
	// Where the waiting Lock was called, in OpenTelemetry's code attributes.
	assert.Equal(t, "github.com/syncwatch/syncwatch/lockorder_test.TestLongWaitYieldsLockWaitSpan", at["code.function.name"].AsString())
	assert.True(t, strings.HasSuffix(at["code.file.path"].AsString(), "lockorder/telemetry_test.go"), at["code.file.path"].AsString())
	assert.Positive(t, at["code.line.number"].AsInt64())
}

func TestLockContextSpansAreChildrenOfTheCaller(t *testing.T) {
	fresh(t)
	rec := recorderProvider(t)
	lockorder.Configure(lockorder.WithWaitThreshold(0))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithWaitThreshold(10 * time.Millisecond)) })
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, parent := tp.Tracer("test").Start(t.Context(), "caller")

	m := lockorder.NewMutex("ctxspan")
	locked, release := make(chan struct{}), make(chan struct{})
	go func() {
		m.Lock()
		close(locked)
		<-release
		m.Unlock()
	}()
	<-locked
	tctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	require.Error(t, m.LockContext(tctx))
	close(release)
	parent.End()

	var timeout sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "wait-timeout" {
			timeout = s
		}
	}
	require.NotNil(t, timeout, "a wait-timeout span")
	assert.Equal(t, parent.SpanContext().SpanID(), timeout.Parent().SpanID())
	assert.Equal(t, parent.SpanContext().TraceID(), timeout.SpanContext().TraceID())
	assert.NotZero(t, attrs(timeout)["syncwatch.holder.goroutine"].AsInt64())
}

// With no tracer provider set nothing is traced, not even on behalf of a
// traced caller: lockorder reads neither OpenTelemetry's global provider
// nor the caller's span's (see WithTracerProvider).
func TestWithoutProviderNothingIsTraced(t *testing.T) {
	fresh(t)
	lockorder.UnsetProviders(t)
	lockorder.Configure(lockorder.WithWaitThreshold(0))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithWaitThreshold(10 * time.Millisecond)) })
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, parent := tp.Tracer("test").Start(t.Context(), "caller")

	lockorder.ReportContext(ctx, lockorder.Violation{Kind: "custom", Message: "on behalf of a traced caller"})
	lockorder.Report(lockorder.Violation{Kind: "custom", Message: "no context"})
	m := lockorder.NewMutex("untraced")
	locked := make(chan struct{})
	go func() {
		m.Lock()
		close(locked)
		waitingOn(t, "untraced", 1) // a contended wait
		m.Unlock()
	}()
	<-locked
	require.NoError(t, m.LockContext(ctx)) // a contended wait on behalf of the caller
	m.Unlock()
	parent.End()

	assert.Len(t, lockorder.Violations(), 2, "reported, though not traced")
	spans := rec.Ended()
	require.Len(t, spans, 1)
	assert.Equal(t, "caller", spans[0].Name())
}
