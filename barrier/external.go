package barrier

import (
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// The face of syncwatch's registry of waits for barriers and clocks built
// outside this package, such as barrier/etcd's, whose ranks live in other
// processes: they register their waits, so that a lock wait in this
// process is explained as "held by goroutine 28, which is waiting for
// barrier allreduce (rank 3, generation 5)", and they explain what the
// goroutine of a rank is doing, to tell other processes.

// Goroutine returns the calling goroutine's id, as reports and
// explanations name goroutines.
func Goroutine() int64 { return goid.ID() }

// ExternalKind is what an external wait waits for: [ExternalBarrier] or
// [ExternalClock].
type ExternalKind string

// The kinds of external waits.
const (
	ExternalBarrier ExternalKind = waitfor.KindBarrier
	ExternalClock   ExternalKind = waitfor.KindClock
)

// BeginExternalWait registers the calling goroutine as blocked, until end
// is called, in a bounded wait at the barrier or clock named object, with
// detail ("rank 3, generation 5"). It is described as "barrier OBJECT
// (DETAIL)". end must be called by the same goroutine once the wait ends;
// calling it again does nothing. A kind other than the ExternalKind
// constants panics.
func BeginExternalWait(kind ExternalKind, object, detail string) (end func()) {
	if kind != ExternalBarrier && kind != ExternalClock {
		panic("barrier: BeginExternalWait of unknown kind " + string(kind))
	}
	w := waitfor.Begin(&waitfor.Wait{
		Goroutine: goid.ID(), Kind: string(kind), Object: object, Detail: detail, Bounded: true,
	})
	return func() { waitfor.End(w) }
}

// GoroutineWait is what a goroutine is doing, in syncwatch's terms: the
// syncwatch wait it is blocked in, and who can release it.
type GoroutineWait struct {
	// Goroutine is the goroutine explained.
	Goroutine int64
	// Waiting reports whether it is blocked in a syncwatch wait (a
	// lockorder lock, a barrier, a clock...). The fields below up to
	// Reason are set only then.
	Waiting bool
	// Kind is the kind of wait: "lock", "rlock", "barrier", "clock", ...
	Kind string
	// WaitingFor names what it waits for: "lock aggregation_lock#1".
	WaitingFor string
	// Holder is the goroutine holding the lock waited for, 0 if unknown
	// or if the wait is not for a lock.
	Holder int64
	// Since is when the wait began.
	Since time.Time
	// Reason follows the chain of waits: "waiting for lock
	// aggregation_lock#1, held by goroutine 28, which is waiting for
	// barrier allreduce (rank 3, generation 5)".
	Reason string
	// State, for a goroutine in no syncwatch wait, is what the runtime
	// shows of it: "is blocked in chan receive at main.worker
	// (worker.go:42)", "is running at ...", "has exited"; empty if no
	// goroutine dump was at hand.
	State string
}

// explainDumpAge bounds how often ExplainGoroutine stops the world to dump
// the goroutines: it reuses a dump at most this old, and takes a fresh one
// for a goroutine missing from it at most this often.
const explainDumpAge = time.Second

// lastMissDump is when ExplainGoroutine last took a fresh dump because the
// goroutine it explains was missing from the recent one (mono-free: a
// wall-clock UnixNano is enough for a rate limit).
var lastMissDump atomic.Int64

// ExplainGoroutine says what goroutine gid is doing now. The explanation
// of a goroutine in no syncwatch wait, or of a chain of waits that ends at
// one, uses a goroutine dump, which stops the world: at most two are taken
// per second in the process, however often this is called. A goroutine
// missing from a reused dump (it may have started after it) is looked for
// in a fresh one, if the rate allows; otherwise its State is empty.
func ExplainGoroutine(gid int64) GoroutineWait {
	out := GoroutineWait{Goroutine: gid}
	w := waitfor.Lookup(gid)
	d := waitfor.Recent(explainDumpAge)
	if w == nil {
		if !d.Alive(gid) {
			now, last := time.Now().UnixNano(), lastMissDump.Load()
			if time.Duration(now-last) < explainDumpAge || !lastMissDump.CompareAndSwap(last, now) {
				return out
			}
			d = waitfor.Fresh()
		}
		out.State = waitfor.RoutineState(d, gid)
		return out
	}
	out.Waiting = true
	out.Kind = w.Kind
	out.WaitingFor = waitfor.Describe(w)
	out.Holder = w.Holder()
	out.Since = w.Since()
	out.Reason = waitfor.Snapshot().Explain(w, d)
	return out
}
