//go:build !syncwatch_off

package lockorder

import (
	"sync/atomic"
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/held"
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
// goroutine does with locks is recorded. Nothing outside the goroutine
// reads its held stack but a snapshot (a report, the exit check), where a
// group hold is only ever context.

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
	wg atomic.Uintptr
	l  *class.Lock // in check mode, the group's hold to take; nil otherwise
	w  uint32      // the mode word l was recorded under (see held.G.Retag)
	gs *held.G     // the state the hold was pushed onto, once it was
}

var goStarted [startedSize]startedRec

// startedWindow returns goroutine id's window of started.
func startedWindow(id int64, p uint64) *startedRec {
	return &goStarted[(uint64(id)+p)&(startedSize-1)]
}

// startTracking records the calling goroutine id as started by wg's Go,
// owing its first state the hold of l, under mode word w, if l is not nil.
// It returns the record, or nil if id's window is full.
func startTracking(id int64, wg *WaitGroup, w uint32, l *class.Lock) *startedRec {
	for p := range uint64(startedProbe) {
		r := startedWindow(id, p)
		if r.id.Load() == 0 && r.id.CompareAndSwap(0, id) {
			r.l, r.w, r.gs = l, w, nil
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
	r.l, r.gs = nil, nil
	r.wg.Store(0)
	r.id.Store(0)
}

// adoptGroup is gls.Made: if g's goroutine was started by WaitGroup.Go in
// check mode and has not taken its group's hold yet, it takes it on g, its
// first state.
func adoptGroup(g *held.G) {
	id := g.ID()
	for p := range uint64(startedProbe) {
		if r := startedWindow(id, p); r.id.Load() == id {
			if r.l != nil && r.gs == nil {
				r.gs = g
				g.Retag(r.w)
				tryAcquired(g, r.l, true, false)
			}
			return
		}
	}
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

// appendStarted appends the goroutines recorded as started by wg. Its cost
// is the table's size: it serves the wait-for graph, not a lock path.
func appendStarted(dst []int64, wg *WaitGroup) []int64 {
	key := uintptr(unsafe.Pointer(wg))
	for i := range goStarted {
		r := &goStarted[i]
		id := r.id.Load()
		if id == 0 || r.wg.Load() != key {
			continue
		}
		// The same record still: ids are never reused, and a record
		// taken by another goroutine meanwhile would read another id.
		if r.id.Load() == id {
			dst = append(dst, id)
		}
	}
	return dst
}
