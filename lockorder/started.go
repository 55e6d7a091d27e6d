//go:build !syncwatch_off

package lockorder

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/hb"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/mono"
)

// The goroutines started by WaitGroup.Go, while their function runs.
//
// Each records itself in goStarted, a table indexed by goroutine id: its
// group's Wait asks it whether the caller is one of them (a Wait inside
// the group waits for itself) and whom it waits for. A goroutine whose
// window is full uses its group's own map instead (WaitGroup.running).
//
// In check mode the function runs holding its group for reading, so that
// the locks it takes are ordered after the group (see WaitGroup.Go). That
// hold is taken lazily: a goroutine that takes no lock needs no state
// (internal/gls) for it, and most of the cost of a million short
// goroutines was making and collecting those states. The record keeps the
// group's identity, and the hold is pushed when the goroutine's first
// state is made (gls.Made calls adoptGroup), which is before anything the
// goroutine does with locks is recorded. The state also gets a creation
// number reserved when the goroutine started (held.Reserve): it took part
// from then on, and R11 counts goroutines by that number. The paths that
// look the calling goroutine's state up without making one ask ownState,
// which makes it for a goroutine that owes its group's hold, so that they
// see the group held as they did when every such goroutine had a state.

const (
	startedSize  = 1 << 12
	startedProbe = 4
)

// startedRec is one goroutine started by WaitGroup.Go. id and wg are read
// by any goroutine; the rest only by the goroutine recorded.
type startedRec struct {
	id atomic.Int64 // the goroutine, 0 if the record is free
	// wg is the group's address: an identity only, which keeps nothing
	// alive (a Wait's record must not keep its group reachable; see
	// ReportBlocked). 0 while the record is being taken or freed.
	wg  atomic.Uintptr
	l   *class.Lock // in check mode, the group's hold to take; nil otherwise
	w   uint32      // the mode word l was recorded under (see held.G.Retag)
	seq uint64      // with l, the creation number reserved for the state
	gs  *held.G     // the state the hold was pushed onto, once it was
	// inherit is what the goroutine that called Go knew (R21), for the
	// goroutine's clock, if it makes one.
	inherit *hb.Clock
}

var goStarted [startedSize]startedRec

// goStartedOff makes WaitGroup.Go use its groups' own maps, for tests of
// that path (a goroutine whose window is full).
var goStartedOff atomic.Bool

// startedWindow returns goroutine id's window of started.
func startedWindow(id int64, p uint64) *startedRec {
	return &goStarted[(uint64(id)+p)&(startedSize-1)]
}

// startTracking records the calling goroutine id as started by wg's Go,
// owing its first state the hold of l, under mode word w, if l is not nil,
// and the clock inherit. It returns the record, or nil if id's window is
// full.
func startTracking(id int64, wg *WaitGroup, w uint32, l *class.Lock, inherit *hb.Clock) *startedRec {
	if goStartedOff.Load() {
		return nil
	}
	for p := range uint64(startedProbe) {
		r := startedWindow(id, p)
		if r.id.Load() == 0 && r.id.CompareAndSwap(0, id) {
			r.l, r.w, r.gs, r.inherit = l, w, nil, inherit
			if l != nil {
				r.seq = held.Reserve()
			}
			r.wg.Store(uintptr(unsafe.Pointer(wg)))
			return r
		}
	}
	return nil
}

// stop ends record r of the calling goroutine id: it drops the group's
// hold if it was taken, gives up the goroutine's state (it is about to
// exit; see gls.Release) and frees r.
func (r *startedRec) stop(id int64) {
	if r.gs != nil {
		leaveBlocking(r.gs, r.l)
		gls.Release(id)
	}
	r.l, r.gs, r.inherit = nil, nil, nil
	r.wg.Store(0)
	r.id.Store(0)
}

// adoptGroup is gls.Made: if g's goroutine was started by WaitGroup.Go in
// check mode and has not taken its group's hold yet, g, its first state,
// gets the creation number reserved for it and the hold.
func adoptGroup(g *held.G) {
	if r := owed(g.ID()); r != nil {
		r.gs = g
		g.Renumber(r.seq)
		if g.HB == nil {
			g.Inherit = r.inherit
		}
		g.Retag(r.w)
		tryAcquired(g, r.l, true, false)
	}
}

// owed returns the calling goroutine id's record if it owes its first
// state its group's hold, or nil.
func owed(id int64) *startedRec {
	for p := range uint64(startedProbe) {
		if r := startedWindow(id, p); r.id.Load() == id {
			if r.l != nil && r.gs == nil {
				return r
			}
			return nil
		}
	}
	return nil
}

// inherited returns what the calling goroutine id, started by
// WaitGroup.Go and owing its first state its group's hold, was given to
// know (R21): it has no state to keep it in yet. nil otherwise.
func inherited(id int64) *hb.Clock {
	if r := owed(id); r != nil {
		return r.inherit
	}
	return nil
}

// ownState returns the calling goroutine id's state, as gls.Find does, for
// a path that looks it up without making one; but a goroutine that owes
// its group's hold gets its state now (with the hold), under mode word w,
// so that the path sees the group held.
func ownState(w uint32, id int64) *held.G {
	if gs := gls.Find(id); gs != nil || owed(id) == nil {
		return gs
	}
	return current(w)
}

// ownSeq is the calling goroutine id's creation number, as its state has
// it, or as reserved for the state it has not made yet; 0 if neither.
func ownSeq(id int64) uint64 {
	if gs := gls.Find(id); gs != nil {
		return gs.Seq()
	}
	if r := owed(id); r != nil {
		return r.seq
	}
	return 0
}

// startedBy reports whether goroutine id is recorded as started by wg.
func startedBy(id int64, wg *WaitGroup) bool {
	for p := range uint64(startedProbe) {
		if r := startedWindow(id, p); r.id.Load() == id {
			return r.wg.Load() == uintptr(unsafe.Pointer(wg))
		}
	}
	return false
}

// appendStarted appends the goroutines recorded as started by wg, as one
// scan of the table found them at most startedIndexAge ago: the wait-for
// graph asks once per blocked Wait each time the monitor looks, and one
// scan serves them all, so the cost does not grow with the waits. A
// goroutine started since may be missing until the next scan; one that
// has returned since is listed, and, waiting for nothing, closes no cycle.
func appendStarted(dst []int64, wg *WaitGroup) []int64 {
	x := &startedIndex
	x.mu.Lock()
	defer x.mu.Unlock()
	if now := mono.Now(); x.byGroup == nil || time.Duration(now-x.built) >= startedIndexAge {
		x.byGroup, x.built = scanStarted(x.byGroup), now
	}
	return append(dst, x.byGroup[uintptr(unsafe.Pointer(wg))]...)
}

const startedIndexAge = 10 * time.Millisecond

// startedIndex is goStarted by group, as scanStarted last found it.
var startedIndex struct {
	mu      sync.Mutex
	built   int64 // mono.Now at the scan
	byGroup map[uintptr][]int64
}

// scanStarted reads goStarted into m, cleared, or a new map.
func scanStarted(m map[uintptr][]int64) map[uintptr][]int64 {
	if m == nil {
		m = map[uintptr][]int64{}
	}
	clear(m)
	for i := range goStarted {
		r := &goStarted[i]
		id := r.id.Load()
		if id == 0 {
			continue
		}
		key := r.wg.Load()
		// The same record still: ids are never reused, and a record
		// taken by another goroutine meanwhile would read another id.
		if key != 0 && r.id.Load() == id {
			m[key] = append(m[key], id)
		}
	}
	return m
}
