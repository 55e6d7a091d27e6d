// Package waits is the registry of current waits: which goroutine is
// blocked in a syncwatch wait, on what, and (for locks) who holds it.
//
// It is what lets a barrier say "rank 17 is waiting for lock
// aggregation_lock, held by goroutine 812, which is waiting at this
// barrier". Entries are added and removed only on slow paths (a lock that
// is contended, a barrier wait), never on an uncontended Lock.
package waits

import (
	"sync"
	"time"

	"github.com/syncwatch/syncwatch/internal/held"
)

// Wait describes one goroutine's current wait.
type Wait struct {
	Goroutine int64
	// Kind is what is awaited: "lock", "rlock", "barrier", "clock"...
	Kind string
	// Object names the lock or barrier.
	Object string
	// ObjectID identifies it (a lock id, a barrier id).
	ObjectID uint64
	// Holder is the goroutine holding the lock for writing, when known.
	Holder int64
	// Detail adds facts, e.g. "rank 3, generation 41".
	Detail string
	Since  time.Time
}

const shards = 32

type shard struct {
	mu sync.Mutex
	m  map[int64]Wait
}

var table [shards]shard

func shardOf(gid int64) *shard { return &table[uint64(gid)%shards] }

// Begin records that w.Goroutine starts waiting.
func Begin(w Wait) {
	s := shardOf(w.Goroutine)
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[int64]Wait)
	}
	s.m[w.Goroutine] = w
	s.mu.Unlock()
}

// End records that goroutine gid stopped waiting.
func End(gid int64) {
	s := shardOf(gid)
	s.mu.Lock()
	delete(s.m, gid)
	s.mu.Unlock()
}

// Lookup returns the current wait of goroutine gid: one registered with
// Begin, or a lock wait recorded in the goroutine's held-lock state (the
// cheap path lockorder uses for contended Lock calls).
func Lookup(gid int64) (Wait, bool) {
	s := shardOf(gid)
	s.mu.Lock()
	w, ok := s.m[gid]
	s.mu.Unlock()
	if ok {
		return w, true
	}
	if g := held.Lookup(gid); g != nil {
		if l, read, since := g.Waiting(); l != nil && g.ID() == gid {
			kind := "lock"
			if read {
				kind = "rlock"
			}
			return Wait{Goroutine: gid, Kind: kind, Object: l.Name(), ObjectID: l.ID, Holder: l.Holder(), Since: since}, true
		}
	}
	return Wait{}, false
}

// All returns every wait registered with Begin. Lock waits recorded in
// goroutines' held-lock state are not listed; Lookup finds them.
func All() []Wait {
	var out []Wait
	for i := range table {
		s := &table[i]
		s.mu.Lock()
		for _, w := range s.m {
			out = append(out, w)
		}
		s.mu.Unlock()
	}
	return out
}
