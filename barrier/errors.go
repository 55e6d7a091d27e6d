package barrier

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrBroken matches every *[BrokenError]: the generation an Await was for
// broke before every participating rank arrived.
var ErrBroken = errors.New("barrier: broken")

// ErrDuplicateArrival matches every *[DuplicateArrivalError]: a rank
// arrived twice for one generation.
var ErrDuplicateArrival = errors.New("barrier: duplicate arrival")

// ErrLeft matches every *[LeftError]: the rank left the barrier with
// [Barrier.Leave] and can no longer wait at it.
var ErrLeft = errors.New("barrier: rank has left")

// ErrAborted is matched, through [BrokenError.Cause], by every error of a
// generation broken by [Barrier.Abort].
var ErrAborted = errors.New("barrier: aborted")

// BrokenError reports a generation that broke: a waiter's context ended,
// the barrier's timeout passed, [Barrier.Abort] was called or the action
// failed before every participating rank arrived. Every waiter of the
// generation, and every rank that arrives for it late, gets the same
// *BrokenError; it must not be modified.
//
// errors.Is matches it against [ErrBroken] and, through Cause, against
// context.DeadlineExceeded, context.Canceled, [ErrAborted] or the action's
// error.
type BrokenError struct {
	// Barrier is the barrier's name (see [WithName]).
	Barrier string
	// Generation is the generation that broke.
	Generation uint64
	// Parties is the barrier's number of ranks.
	Parties int
	// Arrived lists the ranks that arrived, in arrival order.
	Arrived []int
	// Missing lists, in increasing order, the participating ranks that
	// never arrived.
	Missing []int
	// Why says, for ranks of Missing and in the same order, what their
	// goroutine was doing when the generation broke: for every rank of
	// Missing when there are at most [MaxExplained], else for
	// MaxExplained of them, those whose goroutine is known first.
	Why []MissingRank
	// NeverArrived is how many ranks of Missing never called Await at
	// this barrier (the ranks Why says "never arrived at this barrier"
	// of, and possibly more).
	NeverArrived int
	// Left lists the ranks that had left the barrier (see [Barrier.Leave])
	// and did not arrive.
	Left []int
	// Waited is the time from the generation's first arrival to the break.
	Waited time.Duration
	// Cause is what broke the generation: a timeout (matching
	// context.DeadlineExceeded), the context error of the waiter that gave
	// up, Abort's reason (matching ErrAborted) or the action's error.
	Cause error
	// BrokenBy is the rank whose wait or action broke the generation, or
	// -1 when Abort or Leave did.
	BrokenBy int
	// History is the flight recorder at the time of the break: the last
	// generations of the barrier (see [WithHistory]), oldest first, ending
	// with this one. The records are shared and must not be modified.
	History []Record
}

// Error describes the break in one line: the generation, who is missing
// and why, and the cause. Ranks are given as ranges ("[1-5, 7, 9-12]"),
// ranks with the same explanation together, and the text is bounded
// whatever the number of parties: lists are cut short and explanations
// that do not fit are counted, not written. The fields hold everything.
func (e *BrokenError) Error() string {
	t := boundedText{max: maxErrorText}
	t.head("barrier: broken: " + e.summary())
	if e.Cause != nil {
		t.head(": " + e.Cause.Error())
	}
	for _, c := range e.whyClauses() {
		t.clause("; " + c)
	}
	return t.String()
}

// summary is "NAME generation G after D: A/P arrived, missing [..]".
func (e *BrokenError) summary() string {
	s := fmt.Sprintf("%s generation %d after %v: %d/%d arrived, missing %s",
		e.Barrier, e.Generation, e.Waited.Round(time.Microsecond), len(e.Arrived), e.Parties, rankList(e.Missing))
	if len(e.Left) > 0 {
		s += ", left " + rankList(e.Left)
	}
	return s
}

// Is reports whether target is ErrBroken.
func (e *BrokenError) Is(target error) bool { return target == ErrBroken }

// Unwrap returns Cause.
func (e *BrokenError) Unwrap() error { return e.Cause }

// ErrorType returns "barrier-broken", or "collective-mismatch" when the
// cause is a *[MismatchError], for telemetry's error.type.
func (e *BrokenError) ErrorType() string { return string(e.kind()) }

// Report returns the multi-line account of the break: the summary, the
// explanations of Why and the flight recorder of recent generations. Like
// Error, it gives ranks as ranges and bounds every list it writes.
func (e *BrokenError) Report() string {
	return fmt.Sprintf("barrier %s\n%s", e.summary(), e.body(len(e.History)))
}

// body is the report after its summary line, with at most the last
// maxHistory generations.
func (e *BrokenError) body(maxHistory int) string {
	var b strings.Builder
	if e.Cause != nil {
		fmt.Fprintf(&b, "cause: %v\n", e.Cause)
	}
	if e.BrokenBy >= 0 {
		fmt.Fprintf(&b, "broken by rank %d\n", e.BrokenBy)
	}
	if len(e.Why) > 0 {
		b.WriteString("why ranks are missing:\n")
		for _, m := range e.Why {
			fmt.Fprintf(&b, "  %s\n", m)
		}
		never, other := e.unexplained()
		for _, c := range unexplainedClauses(true, never, other) {
			fmt.Fprintf(&b, "  %s\n", c)
		}
	}
	if h := e.History[max(0, len(e.History)-maxHistory):]; len(h) > 0 {
		b.WriteString(formatHistory(h))
	}
	return b.String()
}

// DuplicateArrivalError is returned by an Await for a rank that has
// already arrived for the current generation (two goroutines claim one
// rank). The first arrival is unaffected.
type DuplicateArrivalError struct {
	// Barrier is the barrier's name.
	Barrier string
	// Rank arrived twice for Generation.
	Rank       int
	Generation uint64
}

// Error describes the duplicate arrival.
func (e *DuplicateArrivalError) Error() string {
	return fmt.Sprintf("barrier: duplicate arrival: %s rank %d already arrived for generation %d", e.Barrier, e.Rank, e.Generation)
}

// Is reports whether target is ErrDuplicateArrival.
func (e *DuplicateArrivalError) Is(target error) bool { return target == ErrDuplicateArrival }

// ErrorType returns "barrier-duplicate-arrival".
func (e *DuplicateArrivalError) ErrorType() string { return "barrier-duplicate-arrival" }

// LeftError is returned by an Await for a rank that has left the barrier.
type LeftError struct {
	// Barrier is the barrier's name.
	Barrier string
	// Rank is the rank that left.
	Rank int
	// Reason is the reason given to Leave, possibly nil.
	Reason error
}

// Error describes the departed rank.
func (e *LeftError) Error() string {
	s := fmt.Sprintf("barrier: rank has left: %s rank %d", e.Barrier, e.Rank)
	if e.Reason != nil {
		s += ": " + e.Reason.Error()
	}
	return s
}

// Is reports whether target is ErrLeft.
func (e *LeftError) Is(target error) bool { return target == ErrLeft }

// Unwrap returns Reason.
func (e *LeftError) Unwrap() error { return e.Reason }

// ErrorType returns "barrier-rank-left".
func (e *LeftError) ErrorType() string { return "barrier-rank-left" }
