package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/lockorder"
)

// traceMode puts lockorder in trace mode, as in production, with spans
// going to a recorder, for the duration of the test.
func traceMode(t *testing.T) (*tracetest.SpanRecorder, *sdktrace.TracerProvider) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace), lockorder.WithTracerProvider(tp))
	t.Cleanup(func() {
		lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithTracerProvider(otel.GetTracerProvider()))
		_ = tp.Shutdown(context.Background())
	})
	return rec, tp
}

func spansNamed(rec *tracetest.SpanRecorder, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// startRestock starts a slow restock and waits until it holds the lock.
func startRestock(t *testing.T, ctx context.Context, url string, inv *Inventory, work time.Duration) <-chan int {
	t.Helper()
	status := make(chan int, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", url+"/restock/widgets?n=5&work="+work.String(), nil)
		resp, err := http.DefaultClient.Do(req)
		if !assert.NoError(t, err) {
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	require.Eventually(t, inv.busy, 2*time.Second, time.Millisecond, "the restock takes the lock")
	return status
}

func TestSlowRestockRecordsLockWait(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rec, tp := traceMode(t)
	inv := NewInventory()
	srv := httptest.NewServer(NewHandler(inv, tp))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	restock := startRestock(t, ctx, srv.URL, inv, 150*time.Millisecond)
	resp, err := http.Get(srv.URL + "/stock/widgets")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{"item":"widgets","count":5}`, string(body), "the read waited for the restock")
	assert.Equal(t, http.StatusNoContent, <-restock)

	waits := spansNamed(rec, "lock wait")
	require.Len(t, waits, 1, "one contended read")
	w := waits[0]
	assert.Equal(t, "inventory", attr(w, "syncwatch.lock.class"))
	assert.True(t, strings.HasPrefix(attr(w, "syncwatch.lock.name"), "inventory#"))
	assert.GreaterOrEqual(t, w.EndTime().Sub(w.StartTime()), 10*time.Millisecond)

	gets := spansNamed(rec, "GET /stock/{item}")
	require.Len(t, gets, 1)
	assert.Equal(t, gets[0].SpanContext().SpanID(), w.Parent().SpanID(), "the wait is a child of the request")
	assert.Equal(t, gets[0].SpanContext().TraceID(), w.SpanContext().TraceID())
}

// A read whose client gives up stops waiting for the lock: nothing hangs.
func TestAbandonedReadStopsWaiting(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rec, tp := traceMode(t)
	inv := NewInventory()
	srv := httptest.NewServer(NewHandler(inv, tp))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	restock := startRestock(t, ctx, srv.URL, inv, 500*time.Millisecond)
	client := &http.Client{Timeout: 30 * time.Millisecond}
	_, err := client.Get(srv.URL + "/stock/widgets")
	require.Error(t, err)
	require.Eventually(t, func() bool { return len(spansNamed(rec, "GET /stock/{item}")) == 1 }, 400*time.Millisecond, time.Millisecond,
		"the handler returned before the restock released the lock")
	get := spansNamed(rec, "GET /stock/{item}")[0]
	assert.Equal(t, codes.Error, get.Status().Code)
	assert.Contains(t, get.Status().Description, "gave up waiting for inventory#")
	assert.Empty(t, spansNamed(rec, "lock wait"), "an abandoned wait is not a lock wait span")
	assert.Equal(t, http.StatusNoContent, <-restock)
}

// The demo of main runs on loopback only and prints the lock waits and the
// spans.
func TestRunDemo(t *testing.T) {
	t.Cleanup(func() { lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck)) })
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, run(ctx, &out, "127.0.0.1:0", false))
	t.Log(out.String())
	s := out.String()
	assert.Contains(t, s, "spans to stdout")
	assert.Equal(t, 3, strings.Count(s, "lock wait span: inventory#"))
	assert.Equal(t, 3, strings.Count(s, `GET /stock/widgets -> 200 OK {"count":12,"item":"widgets"}`))
	assert.Contains(t, s, "POST /restock/widgets?n=12&work=250ms -> 204 No Content")
	assert.Equal(t, 3, strings.Count(s, `{"Name":"lock wait"`), "exported as JSON lines")
}
