package etcd

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/staleness"
)

// ErrLeaseExpired is matched, through [barrier.BrokenError]'s Cause or a
// *[ClockWaitError], when a generation broke or a clock wait ended because
// a rank's lease expired: its process died, or is cut off from etcd.
var ErrLeaseExpired = errors.New("barrier/etcd: lease expired")

// ErrRankLeft is matched, through a [barrier.BrokenError]'s Cause, when a
// generation broke because a rank closed its handle while others waited.
var ErrRankLeft = errors.New("barrier/etcd: rank left")

// ErrUnavailable matches every *[UnavailableError]: etcd could not be
// reached in time to arrive or to learn the verdict.
var ErrUnavailable = errors.New("barrier/etcd: etcd unavailable")

// ErrLeaseLost matches every *[LeaseLostError]: this process's lease for
// the rank expired or was revoked, so the rank can no longer take part.
var ErrLeaseLost = errors.New("barrier/etcd: lease lost")

// ErrRankTaken matches every *[RankTakenError]: another process holds the
// rank.
var ErrRankTaken = errors.New("barrier/etcd: rank taken")

// ErrSettingsMismatch matches every *[SettingsMismatchError]: a Join
// whose [Settings] differ from those recorded for the barrier or clock.
var ErrSettingsMismatch = errors.New("barrier/etcd: settings mismatch")

// UnavailableError is returned by an Await that could not reach etcd
// within its bound (plus the decide timeout) to arrive or to read its
// generation's verdict. It is not a verdict: the generation may have
// completed or broken without this rank knowing. The rank stays on the
// generation, and its next Await for it arrives again (arriving twice is
// harmless) and returns the verdict, so ranks never drift apart.
type UnavailableError struct {
	// Barrier is the barrier's name, Rank and Generation the wait's.
	Barrier    string
	Rank       int
	Generation uint64
	// Err is the client's error.
	Err error
}

// Error describes the failure.
func (e *UnavailableError) Error() string {
	return fmt.Sprintf("barrier/etcd: %s rank %d generation %d: verdict unknown, etcd unavailable: %v",
		e.Barrier, e.Rank, e.Generation, e.Err)
}

// Is reports whether target is ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unwrap returns Err.
func (e *UnavailableError) Unwrap() error { return e.Err }

// ErrorType returns "etcd-unavailable".
func (e *UnavailableError) ErrorType() string { return "etcd-unavailable" }

// LeaseLostError is returned for a rank whose lease this process lost:
// it expired (the process was cut off from etcd longer than its TTL) or
// was revoked. Join the rank again to take part.
type LeaseLostError struct {
	Barrier string
	Rank    int
}

// Error describes the lost lease.
func (e *LeaseLostError) Error() string {
	return fmt.Sprintf("barrier/etcd: lease lost: %s rank %d: its lease expired or was revoked", e.Barrier, e.Rank)
}

// Is reports whether target is ErrLeaseLost.
func (e *LeaseLostError) Is(target error) bool { return target == ErrLeaseLost }

// ErrorType returns "etcd-lease-lost".
func (e *LeaseLostError) ErrorType() string { return "etcd-lease-lost" }

// RankTakenError is returned by Join for a rank another process holds.
type RankTakenError struct {
	Barrier string
	Rank    int
	// Holder describes the holder: "pid 4242 on host-a".
	Holder string
}

// Error names the rank and its holder.
func (e *RankTakenError) Error() string {
	return fmt.Sprintf("barrier/etcd: rank taken: %s rank %d is held by %s", e.Barrier, e.Rank, e.Holder)
}

// Is reports whether target is ErrRankTaken.
func (e *RankTakenError) Is(target error) bool { return target == ErrRankTaken }

// ErrorType returns "etcd-rank-taken".
func (e *RankTakenError) ErrorType() string { return "etcd-rank-taken" }

// SettingsMismatchError is returned by Join when this handle's
// [Settings] differ from those the first Join under the prefix recorded:
// the handle would disagree with the other ranks on when a generation is
// complete, or on what a clock allows. The rank is not joined, and the
// others go on as if it had not tried.
type SettingsMismatchError struct {
	// Barrier is the handle's name, Rank the rank or worker joining.
	Barrier string
	Rank    int
	// Given are this handle's settings, Recorded those in etcd.
	Given, Recorded Settings
	// RecordedBy says who recorded them: "rank 0 (pid 4242 on host-a)".
	RecordedBy string
}

// Error names each setting that differs.
func (e *SettingsMismatchError) Error() string {
	var diff []string
	add := func(name string, given, recorded any) {
		if given != recorded {
			diff = append(diff, fmt.Sprintf("%s %v, recorded %v", name, given, recorded))
		}
	}
	add("kind", e.Given.Kind, e.Recorded.Kind)
	add("parties", e.Given.Parties, e.Recorded.Parties)
	add("history", e.Given.History, e.Recorded.History)
	add("maxSkew", e.Given.MaxSkew, e.Recorded.MaxSkew)
	return fmt.Sprintf("barrier/etcd: settings mismatch: %s rank %d has %s by %s",
		e.Barrier, e.Rank, strings.Join(diff, "; "), e.RecordedBy)
}

// Is reports whether target is ErrSettingsMismatch.
func (e *SettingsMismatchError) Is(target error) bool { return target == ErrSettingsMismatch }

// ErrorType returns "etcd-settings-mismatch".
func (e *SettingsMismatchError) ErrorType() string { return "etcd-settings-mismatch" }

// ClockWaitError is returned by [Clock.Advance] when it stops waiting
// before the slower workers catch up. It wraps the *staleness.WaitError
// an in-process clock would return, so errors.Is matches
// staleness.ErrWaitTimeout for a timeout, and adds why each slow worker
// is slow, from its process. errors.Is also matches [ErrLeaseExpired]
// when a worker waited for is gone.
type ClockWaitError struct {
	// Wait is the in-process error: the worker, its clock, the clock
	// needed, the slowest workers, how long it waited and the cause.
	Wait *staleness.WaitError
	// Why says, for workers of Wait.Slowest, what they are doing: their
	// lease expired at T, or they are alive and blocked in a syncwatch
	// wait, or alive elsewhere. Rank is the worker.
	Why []barrier.MissingRank
}

// Error is the wait's description followed by the explanations.
func (e *ClockWaitError) Error() string {
	var b strings.Builder
	b.WriteString(e.Wait.Error())
	for i, m := range e.Why {
		if i == barrier.MaxExplained {
			fmt.Fprintf(&b, "; ... %d more", len(e.Why)-i)
			break
		}
		fmt.Fprintf(&b, "; worker %d: %s", m.Rank, m.Reason)
	}
	return b.String()
}

// Unwrap returns Wait.
func (e *ClockWaitError) Unwrap() error { return e.Wait }

// ErrorType returns Wait's error type.
func (e *ClockWaitError) ErrorType() string { return e.Wait.ErrorType() }

// Causes of a generation's break, stored with its verdict.
const (
	causeTimeout      = "timeout"
	causeCanceled     = "canceled"
	causeLeaseExpired = "lease-expired"
	causeLeft         = "left"
	causeMismatch     = "mismatch"
	causeNotKept      = "not-kept"
)

// causeError rebuilds the Cause of a BrokenError from a verdict, so that
// errors.Is matches the same targets in every process.
func causeError(kind, text string, mismatch *barrier.MismatchError) error {
	switch kind {
	case causeTimeout:
		return wrapText(text, errDeadline)
	case causeCanceled:
		return wrapText(text, errCanceled)
	case causeLeaseExpired:
		return wrapText(text, ErrLeaseExpired)
	case causeLeft:
		return wrapText(text, ErrRankLeft)
	case causeMismatch:
		if mismatch != nil {
			return mismatch
		}
	}
	return errors.New(text)
}

// textError is an error with a given text that wraps another.
type textError struct {
	text string
	err  error
}

func (e *textError) Error() string { return e.text }
func (e *textError) Unwrap() error { return e.err }

func wrapText(text string, err error) error { return &textError{text: text, err: err} }

// since rounds how long ago t was, for explanations.
func since(t time.Time, now time.Time) string {
	return now.Sub(t).Round(time.Millisecond).String()
}
