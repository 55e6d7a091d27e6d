package lockorder

import (
	"errors"
	"fmt"
	"time"
)

// ErrWaitAbandoned matches every error returned by a bounded lock wait that
// gave up (LockContext, RLockContext).
var ErrWaitAbandoned = errors.New("lockorder: lock wait abandoned")

// WaitError is returned by LockContext and RLockContext when the context
// ends before the lock is acquired. errors.Is matches it against
// ErrWaitAbandoned and against the context's error.
type WaitError struct {
	// Lock names the lock waited for.
	Lock string
	// Holder is the goroutine holding it for writing when the wait ended,
	// 0 if unknown (readers are not tracked, nor is anything in ModeTrace).
	Holder int64
	// Waited is how long the wait lasted.
	Waited time.Duration
	// Err is ctx.Err().
	Err error
}

// Error describes the abandoned wait.
func (e *WaitError) Error() string {
	holder := ""
	if e.Holder != 0 {
		holder = fmt.Sprintf(", held by goroutine %d", e.Holder)
	}
	return fmt.Sprintf("lockorder: gave up waiting for %s after %v%s: %v", e.Lock, e.Waited.Round(time.Microsecond), holder, e.Err)
}

// Unwrap returns the context's error.
func (e *WaitError) Unwrap() error { return e.Err }

// Is reports whether target is ErrWaitAbandoned.
func (e *WaitError) Is(target error) bool { return target == ErrWaitAbandoned }

// ErrorType returns "wait-timeout", for telemetry's error.type.
func (e *WaitError) ErrorType() string { return string(KindWaitTimeout) }
