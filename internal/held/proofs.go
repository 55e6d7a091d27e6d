package held

import "github.com/syncwatch/syncwatch/internal/class"

// Pending is a report held back because it rests on read holds that may
// not be the goroutine's own: an RWMutex read-locked by one goroutine may
// be read-unlocked by another, so a goroutine that read-locks what it
// seems to read-hold already may have handed the first hold over.
//
// The goroutine's own count of read holds of the lock decides: its read
// acquisitions add one, its RUnlocks take one away, and the report stands
// once the count has fallen Left below where it was when the report was
// held back (docs/RULES.md R12). For a recursive read lock Left is 1, and
// the new hold adds one once taken.
//
// A Pending names its lock by ID, so that a report never proved does not
// keep the lock alive (a collected lock is never released again).
type Pending struct {
	// LockID is the ID of the lock (class.Lock.ID).
	LockID uint64
	// Left is how many more releases than read acquisitions of the lock
	// the goroutine must make for the report to stand.
	Left int
	// Stack is the interned stack of the acquisition being reported.
	Stack uint32
	// Write marks a write acquisition (a LockContext that gave up over a
	// read hold of the goroutine's); otherwise a read acquisition.
	Write bool
}

// proofs are a goroutine's reports held back until it proves the read
// holds they rest on its own (docs/RULES.md R12). A G embeds them; only
// its owner touches them. The zero value holds nothing back.
type proofs struct {
	pend []Pending
}

// maxPending bounds a goroutine's held-back reports: past it the oldest is
// dropped (a goroutine that keeps read-locking what it holds, and never
// releases, needs no more than a few to be reported).
const maxPending = 8

// HoldBack adds p to the held-back reports. One for the same lock, stack
// and kind is replaced: the newer needs no more releases than the older
// (it counts from fewer holds), so it is proved no later.
func (r *proofs) HoldBack(p Pending) {
	kept := r.pend[:0]
	for _, q := range r.pend {
		if q.LockID != p.LockID || q.Stack != p.Stack || q.Write != p.Write {
			kept = append(kept, q)
		}
	}
	clear(r.pend[len(kept):])
	r.pend = kept
	if len(r.pend) == maxPending {
		r.pend = append(r.pend[:0], r.pend[1:]...)
	}
	r.pend = append(r.pend, p)
}

// HasPending reports whether there are held-back reports: one load, for
// the acquisition and release paths.
func (r *proofs) HasPending() bool { return len(r.pend) > 0 }

// TookRead records that the goroutine took a read hold of l itself: each
// held-back report of l needs one more release by it.
func (r *proofs) TookRead(l *class.Lock) {
	for i := range r.pend {
		if r.pend[i].LockID == l.ID {
			r.pend[i].Left++
		}
	}
}

// ReleasedRead records that the goroutine itself released a read hold of
// l, and returns the held-back reports of l this proved, which it forgets.
func (r *proofs) ReleasedRead(l *class.Lock) []Pending {
	var proved []Pending
	kept := r.pend[:0]
	for _, p := range r.pend {
		switch {
		case p.LockID != l.ID:
			kept = append(kept, p)
		case p.Left <= 1:
			proved = append(proved, p)
		default:
			p.Left--
			kept = append(kept, p)
		}
	}
	clear(r.pend[len(kept):])
	r.pend = kept
	return proved
}
