package watchdog

import (
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncwatch/syncwatch/internal/stack"
	"github.com/syncwatch/syncwatch/lockorder"
)

// KindStalled is the lockorder violation kind of a stalled loop: work was
// pending and the loop did not step for longer than its bound. It is
// reported once per stall episode, an episode ending with the next Step.
const KindStalled lockorder.Kind = "stalled"

// report hands a stall to lockorder's report pipeline: handler,
// Violations, lockordertest, and a span with status Error. Each episode
// is a violation of its own.
func report(l *Loop, st Stall, episode uint64) {
	v := lockorder.Violation{
		Kind:   KindStalled,
		Source: "watchdog",
		Message: fmt.Sprintf("loop %s has not stepped for %v with %d pending (bound %v): blocked on %s",
			l.name, st.For.Round(time.Millisecond), st.Pending, st.Bound, st.BlockedOn),
		Time:        time.Now(),
		Goroutine:   st.Goroutine,
		Stack:       frames(st.frames),
		Holder:      st.Holder,
		HolderStack: frames(st.holderFrames),
		Waited:      st.For,
		Detail:      fmt.Sprintf("loop %s: %d pending, last step %s ago; goroutine %d is blocked on %s", l.name, st.Pending, st.For.Round(time.Millisecond), st.Goroutine, st.BlockedOn),
		Err:         &StallError{Stall: st},
		Key:         fmt.Sprintf("%s:%d:%d", KindStalled, l.id, episode),
		Attrs: []attribute.KeyValue{
			attribute.String("syncwatch.loop.name", l.name),
			attribute.Int("syncwatch.loop.pending", st.Pending),
			attribute.Int64("syncwatch.loop.bound_ns", st.Bound.Nanoseconds()),
			attribute.String("syncwatch.loop.blocked_on", st.BlockedOn),
		},
	}
	if st.Goroutine == 0 {
		v.Detail = fmt.Sprintf("loop %s: %d pending; it never called Step", l.name, st.Pending)
	}
	lockorder.Report(v)
}

func frames(fs []stack.Frame) lockorder.Stack {
	if len(fs) == 0 {
		return nil
	}
	out := make(lockorder.Stack, len(fs))
	for i, f := range fs {
		out[i] = lockorder.Frame(f)
	}
	return out
}
