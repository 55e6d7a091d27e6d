package staleness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrTooStale matches a *[StaleError] for a gradient computed on a version
// older than the staleness bound allows.
var ErrTooStale = errors.New("staleness: gradient too stale")

// ErrFutureVersion matches a *[StaleError] for a gradient computed on a
// version the server has not reached. No correct worker can have read such
// a version: it is a bug in whoever chose the base version.
var ErrFutureVersion = errors.New("staleness: gradient computed on a future version")

// StaleError is the error returned by [Policy.Check] for a gradient it
// rejects. errors.Is matches it against exactly one of [ErrTooStale] and
// [ErrFutureVersion].
type StaleError struct {
	// Current is the server's version when the gradient was checked.
	Current uint64
	// Base is the version the gradient was computed on.
	Base uint64
	// Staleness is Current-Base for a stale gradient, always greater than
	// Max. For a future version (Base > Current) it is 0: the gradient is
	// not stale but ahead, by [StaleError.Ahead] versions; the field never
	// holds the wrapped-around difference.
	Staleness uint64
	// Max is the bound in force (Policy.MaxStaleness).
	Max uint64
}

// Future reports whether the gradient was computed on a future version.
func (e *StaleError) Future() bool { return e.Base > e.Current }

// Ahead returns Base-Current for a future version and 0 otherwise.
func (e *StaleError) Ahead() uint64 {
	if e.Future() {
		return e.Base - e.Current
	}
	return 0
}

// Error describes the rejection with its figures.
func (e *StaleError) Error() string {
	if e.Future() {
		return fmt.Sprintf("staleness: gradient computed on version %d, %d ahead of the current version %d",
			e.Base, e.Ahead(), e.Current)
	}
	return fmt.Sprintf("staleness: gradient staleness %d exceeds bound %d (computed on version %d, current %d)",
		e.Staleness, e.Max, e.Base, e.Current)
}

// Unwrap returns [ErrFutureVersion] or [ErrTooStale].
func (e *StaleError) Unwrap() error {
	if e.Future() {
		return ErrFutureVersion
	}
	return ErrTooStale
}

// ErrorType returns "future-version" or "too-stale", for telemetry's
// error.type.
func (e *StaleError) ErrorType() string {
	if e.Future() {
		return "future-version"
	}
	return "too-stale"
}

// ErrWaitTimeout matches a *[WaitError] for an Advance that waited as long
// as it was allowed to (the context's deadline or the clock's max wait)
// for slower workers to catch up.
var ErrWaitTimeout = errors.New("staleness: clock wait timed out")

// WorkerClock is one worker's clock in a [WaitError].
type WorkerClock struct {
	Worker int
	Clock  uint64
}

// WaitError is returned by [Clock.Advance] when it stops waiting before the
// slower workers catch up. The worker's clock stays advanced.
//
// errors.Is matches it against [ErrWaitTimeout] when the wait timed out,
// and against the context's error (context.DeadlineExceeded or
// context.Canceled).
type WaitError struct {
	// Worker is the worker that waited, and Clock its (advanced) clock.
	Worker int
	Clock  uint64
	// Need is the clock every other worker had to reach: Clock minus the
	// clock's maximum skew.
	Need uint64
	// Slowest lists the workers still below Need when the wait ended,
	// slowest first: the ones holding Worker back.
	Slowest []WorkerClock
	// Waited is how long Advance waited.
	Waited time.Duration
	// Err is context.DeadlineExceeded for a timeout (the context's
	// deadline or the clock's max wait) or the context's error.
	Err error
}

// Error names the waiting worker and the workers it waited for.
func (e *WaitError) Error() string {
	return fmt.Sprintf("staleness: worker %d at clock %d gave up after %v waiting for %s to reach clock %d: %v",
		e.Worker, e.Clock, e.Waited.Round(time.Millisecond), formatWorkers(e.Slowest, 8), e.Need, e.Err)
}

// Unwrap returns the cause: the context's error, or
// context.DeadlineExceeded when the max wait ran out.
func (e *WaitError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrWaitTimeout] and the wait timed out.
func (e *WaitError) Is(target error) bool {
	return target == ErrWaitTimeout && errors.Is(e.Err, context.DeadlineExceeded)
}

// ErrorType returns "clock-wait-timeout", or "clock-wait-canceled" when the
// context was canceled.
func (e *WaitError) ErrorType() string {
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return string(KindClockWaitTimeout)
	}
	return "clock-wait-canceled"
}

// formatWorkers lists at most limit workers as "workers 3 (clock 7), 9
// (clock 8)" and says how many more there are.
func formatWorkers(ws []WorkerClock, limit int) string {
	if len(ws) == 0 {
		return "no worker"
	}
	var b strings.Builder
	if len(ws) == 1 {
		b.WriteString("worker ")
	} else {
		b.WriteString("workers ")
	}
	for i, w := range ws {
		if i == limit {
			fmt.Fprintf(&b, " and %d more", len(ws)-limit)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d (clock %d)", w.Worker, w.Clock)
	}
	return b.String()
}

// ErrLeft matches a *[LeftError]: a worker that has left the clock tried
// to advance.
var ErrLeft = errors.New("staleness: worker has left the clock")

// LeftError is returned by [Clock.Advance] for a worker that has left, or
// that left while its Advance was waiting.
type LeftError struct {
	Worker int
	// Clock is the worker's clock when it left (or, for a waiting Advance,
	// the clock it had advanced to).
	Clock uint64
}

// Error names the worker.
func (e *LeftError) Error() string {
	return fmt.Sprintf("staleness: worker %d has left the clock (at clock %d)", e.Worker, e.Clock)
}

// Unwrap returns [ErrLeft].
func (e *LeftError) Unwrap() error { return ErrLeft }

// ErrorType returns "worker-left".
func (e *LeftError) ErrorType() string { return "worker-left" }
