package paramserver

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrShape matches every *[ShapeError].
var ErrShape = errors.New("paramserver: shape mismatch")

// ShapeReason says what is wrong in a *[ShapeError].
type ShapeReason string

// The reasons of a *[ShapeError].
const (
	// ShapeEmpty: no key at all, or (in New) a parameter with no
	// elements.
	ShapeEmpty ShapeReason = "empty"
	// ShapeUnknownKey: a gradient key the server has no parameter for.
	ShapeUnknownKey ShapeReason = "unknown-key"
	// ShapeLength: a gradient whose length differs from the parameter's.
	ShapeLength ShapeReason = "length"
)

// ShapeError is returned by [New] for unusable initial parameters and by
// [Server.Apply] for a gradient that does not fit the parameters. Nothing
// is changed. errors.Is matches it against [ErrShape].
type ShapeError struct {
	// Initial is set for the parameters given to New, clear for a
	// gradient.
	Initial bool
	Reason  ShapeReason
	// Key is the offending key; "" when there is no key at all.
	Key string
	// Want is the parameter's length (-1 for an unknown key) and Got the
	// gradient's, for ShapeUnknownKey and ShapeLength.
	Want, Got int
}

// Error describes the mismatch.
func (e *ShapeError) Error() string {
	switch {
	case e.Initial && e.Key == "" && e.Reason == ShapeEmpty:
		return "paramserver: no initial parameters"
	case e.Initial:
		return fmt.Sprintf("paramserver: initial parameter %q has no elements", e.Key)
	case e.Reason == ShapeEmpty:
		return "paramserver: empty gradient"
	case e.Reason == ShapeUnknownKey:
		return fmt.Sprintf("paramserver: gradient key %q is not a parameter", e.Key)
	}
	return fmt.Sprintf("paramserver: gradient %q has %d elements, the parameter %d", e.Key, e.Got, e.Want)
}

// Unwrap returns [ErrShape].
func (e *ShapeError) Unwrap() error { return ErrShape }

// ErrorType returns "shape-mismatch", for telemetry's error.type.
func (e *ShapeError) ErrorType() string { return "shape-mismatch" }

// ErrNonFinite matches every *[NonFiniteError].
var ErrNonFinite = errors.New("paramserver: non-finite value")

// NonFiniteSource says where a *[NonFiniteError] found its value.
type NonFiniteSource string

// The sources of a *[NonFiniteError].
const (
	// NonFiniteInitial: the parameters given to [New].
	NonFiniteInitial NonFiniteSource = "initial"
	// NonFiniteGradient: the gradient given to [Server.Apply].
	NonFiniteGradient NonFiniteSource = "gradient"
	// NonFiniteUpdate: what applying a finite gradient would make: the
	// new parameters (the step overflowed, or the [WithUpdate] function
	// produced a NaN or an infinity) or, with [WithAggregation], the sum
	// of the round.
	NonFiniteUpdate NonFiniteSource = "update"
)

// NonFiniteError is returned by [New] for initial parameters, and by
// [Server.Apply] for a gradient, that hold a NaN or an infinity, and by
// Apply for a gradient whose update would make one. Nothing is changed:
// the server never holds a non-finite parameter. errors.Is matches it
// against [ErrNonFinite].
type NonFiniteError struct {
	// Source says where Value is.
	Source NonFiniteSource
	// Key and Index locate Value. With several non-finite values, the
	// error names the smallest key, and in it the first index, so that
	// it does not depend on map order.
	Key   string
	Index int
	// Value is NaN, +Inf or -Inf.
	Value float32
}

// Error locates the value.
func (e *NonFiniteError) Error() string {
	switch e.Source {
	case NonFiniteInitial:
		return fmt.Sprintf("paramserver: initial parameter %q[%d] is %v", e.Key, e.Index, e.Value)
	case NonFiniteGradient:
		return fmt.Sprintf("paramserver: gradient %q[%d] is %v", e.Key, e.Index, e.Value)
	}
	return fmt.Sprintf("paramserver: the update would make %q[%d] %v", e.Key, e.Index, e.Value)
}

// Unwrap returns [ErrNonFinite].
func (e *NonFiniteError) Unwrap() error { return ErrNonFinite }

// ErrorType returns "non-finite", for telemetry's error.type.
func (e *NonFiniteError) ErrorType() string { return "non-finite" }

// ErrHistoryTrimmed matches a *[HistoryError].
var ErrHistoryTrimmed = errors.New("paramserver: version no longer in history")

// HistoryError ends a [Server.Watch] that needs a version the server no
// longer keeps (see [WithHistory]): the watcher fell too far behind, or
// asked for an old version. It is never skipped silently.
type HistoryError struct {
	// Want is the version the watcher needed.
	Want uint64
	// Oldest is the oldest version kept when the error was made.
	Oldest uint64
}

// Error names the missing and the oldest kept version.
func (e *HistoryError) Error() string {
	return fmt.Sprintf("paramserver: version %d is no longer kept (oldest kept: %d); watch sooner or raise WithHistory", e.Want, e.Oldest)
}

// Unwrap returns [ErrHistoryTrimmed].
func (e *HistoryError) Unwrap() error { return ErrHistoryTrimmed }

// ErrorType returns "history-trimmed".
func (e *HistoryError) ErrorType() string { return "history-trimmed" }

// ErrWaitTimeout matches a *[WaitError] for a version wait that timed out
// (the context's deadline or the server's max wait).
var ErrWaitTimeout = errors.New("paramserver: version wait timed out")

// WaitError is returned by [Server.WaitVersion], and ends a
// [Server.Watch], when the wait for a version ends before the version
// exists. errors.Is matches it against the context's error, and against
// [ErrWaitTimeout] when the wait timed out.
type WaitError struct {
	// Want is the version waited for, Have the server's version when the
	// wait ended.
	Want, Have uint64
	// Waited is how long the wait lasted.
	Waited time.Duration
	// Err is the context's error, or context.DeadlineExceeded when the
	// server's max wait ran out.
	Err error
}

// Error names the versions.
func (e *WaitError) Error() string {
	return fmt.Sprintf("paramserver: gave up waiting for version %d after %v (at version %d): %v",
		e.Want, e.Waited.Round(time.Millisecond), e.Have, e.Err)
}

// Unwrap returns the cause.
func (e *WaitError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrWaitTimeout] and the wait timed out.
func (e *WaitError) Is(target error) bool {
	return target == ErrWaitTimeout && errors.Is(e.Err, context.DeadlineExceeded)
}

// ErrorType returns "version-wait-timeout", or "version-wait-canceled".
func (e *WaitError) ErrorType() string {
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return "version-wait-timeout"
	}
	return "version-wait-canceled"
}
