package lockorder_test

import (
	"testing"
	"time"
)

// What the tests wait on instead of sleeping: an event (a channel closed,
// a report recorded, a goroutine parked or gone), polled here when nothing
// signals it. A poll gives up only after pollLimit, long enough that a
// loaded machine does not reach it: only a test that would hang does.
const pollLimit = 30 * time.Second

// waitUntil returns once cond holds, and fails the test if it does not
// within pollLimit. Between polls the calling goroutine waits on a timer's
// channel: to the monitor it is blocked, as a goroutine waiting for an
// event is, so a report that needs every goroutine blocked as its evidence
// can come meanwhile. It calls no goroutine into being (testify's
// Eventually does, which would upset a goroutine count). Call it from the
// test's goroutine.
func waitUntil(t testing.TB, cond func() bool, what string) {
	t.Helper()
	if !poll(cond, false) {
		t.Fatalf("timed out after %v waiting for %s", pollLimit, what)
	}
}

// pollBusy polls cond until it holds, for pollLimit at most, and reports
// whether it did. Between polls the calling goroutine sleeps: to the
// monitor, a sleeping goroutine may still act (it is not blocked: rule
// W1), as a worker about to release a lock it was handed may, so no report
// that needs every goroutine blocked comes meanwhile. It does not fail the
// test: safe in goroutines a test spawns, and for callers that assert on
// what they find.
func pollBusy(cond func() bool) bool { return poll(cond, true) }

// poll calls cond until it returns true or pollLimit has passed, pausing
// between calls, from a millisecond up to 16 (cond may take a goroutine
// dump or run a collection), asleep if busy, else blocked on a timer.
func poll(cond func() bool, busy bool) bool {
	deadline := time.Now().Add(pollLimit)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 16*time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
		if busy {
			time.Sleep(pause)
		} else {
			<-time.After(pause)
		}
	}
	return true
}
