package held

import (
	"slices"
	"weak"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
)

// Order edges from write holds of a lock another goroutine may unlock (a
// Mutex's) wait on the goroutine that took them until it releases the
// hold itself (docs/RULES.md R23): a hold handed to another goroutine to
// release was that goroutine's, and the edges seen under it are no order
// the code keeps.

// An Edge is one order edge from a write hold waiting for its proof. It
// holds its locks weakly: an edge waiting keeps no lock alive (a lock
// collected meanwhile ends the edge).
type Edge struct {
	// Key is the chain of the acquisition that saw the edge, salted as
	// the chain cache keys it: cached once none of its edges waits.
	Key chain.Key
	// Obs is the sighting, as the graph is to get it.
	Obs graph.Observation
	// moves is the held lock's Moves() when the edge was seen: the hold is
	// the same while that is unchanged (a release by another goroutine
	// changes it).
	moves uint64
	// Epoch is the caller's epoch when the edge was seen (see Wait).
	Epoch        uint32
	fromID, toID uint64
	fromClass    uint64 // the ID of fromID's class
	from, to     weak.Pointer[class.Lock]
	// lost is set on an edge Released proves whose acquisition had lost
	// an edge, dropped unproved: its chain must not be cached.
	lost bool
}

// Lost reports whether the acquisition the edge was proved for lost an
// edge unproved: its chain must not be cached (it is recorded anew when
// seen again).
func (e *Edge) Lost() bool { return e.lost }

// NewEdge returns the edge from a write hold of from into to, seen at obs
// in epoch, from's hold as it stands now.
func NewEdge(from, to *class.Lock, obs graph.Observation, epoch uint32) Edge {
	return Edge{Obs: obs, moves: from.Moves(), Epoch: epoch, fromID: from.ID, toID: to.ID, fromClass: from.Class.ID, from: weak.Make(from), to: weak.Make(to)}
}

// Locks returns the lock held and the lock acquired, nil if either has
// been collected.
func (e *Edge) Locks() (from, to *class.Lock) {
	from, to = e.from.Value(), e.to.Value()
	if from == nil || to == nil {
		return nil, nil
	}
	return from, to
}

// Live reports whether e still rests on the hold it was seen under: its
// lock is alive and has not changed hands since.
func (e *Edge) Live() bool { return e.live() }

// live reports whether e still rests on the hold it was seen under.
func (e *Edge) live() bool {
	f := e.from.Value()
	return f != nil && f.Moves() == e.moves
}

// proving are the edges from write holds waiting on one goroutine. A G
// embeds them; only its owner touches them. The zero value has nothing
// waiting.
//
// Each edge is looked at when its hold is released (Released, by the
// lock: byFrom), when its acquisition is seen again (provingKey, by the
// chain: byKey), or when it is the oldest past the bound: never all at
// once.
type proving struct {
	queue  []*acquired // oldest first; ended ones are skipped and compacted away
	ended  int         // ended acquisitions still in queue
	byKey  map[chain.Key]*acquired
	byFrom map[uint64][]*acquired // by the ID of the lock held
	// perFrom counts the edges waiting by the class of the lock held
	// (its graph node: every lock of a named class is one).
	perFrom map[uint64]int
	// into are the acquisitions whose edges wait, oldest first, by the
	// ID of the lock acquired: a lock taken under several chains (a
	// Cond.Wait that takes it again on top of a TryLock's hold) has one
	// for each.
	into   map[uint64][]*acquired
	n      int    // the edges waiting
	proved []Edge // see Released and DoneProved
	// dropped are the chains of the latest acquisitions one of whose
	// edges was dropped unproved, in a ring: not to be cached until seen
	// anew.
	dropped  [maxDropped]chain.Key
	nextDrop int
	// givenUp are the chains of sections pushed out past the bound (see
	// HoldEdges), for the caller to cache (GivenUp).
	givenUp []chain.Key
	// lostBy are the acquisitions whose edges from a read hold were
	// dropped unrecorded while it stood (readLost), by the ID of its
	// lock: its release by the goroutine ends their standing
	// (ReadReleased).
	lostBy map[uint64][]*acquired
	// owner is the goroutine state that embeds p (set by Revive), whose
	// holds HoldEdges looks at; nil for a proving of its own (tests),
	// which takes every acquisition not released for a nesting.
	owner *G
}

// acquired is the edges of one acquisition that wait: all of its chain
// key.
type acquired struct {
	key    chain.Key
	to     uint64 // the ID of the lock acquired
	toRead bool   // acquired for reading
	epoch  uint32
	edges  []Edge
	over   bool // ended: every edge proved or dropped, or seen anew
	// released: the goroutine has released the hold the acquisition
	// took (ReleasedInto): a section ended under the holds its edges
	// are from.
	released bool
	lost     bool // an edge was dropped unproved: seen again, it is recorded anew
	// readLost: an edge of its chain from a read hold was dropped
	// unrecorded (lose): its edges from write holds, added, must not
	// cache the chain. Seen again while they wait and the read holds
	// stand (lostSrcs), it is not recorded anew (a loop under long holds
	// would be on the slow path at every Lock); once they are added, or
	// one of those holds has fallen or been released by the goroutine
	// (ReadReleased sets lost), it is: the chain is then under a new
	// hold, whose edges are to be recorded.
	readLost bool
	lostSrcs []lostSrc
}

// lostSrc is a read hold an acquisition's edge was dropped from: of the
// lock, held weakly, at its read generation gen.
type lostSrc struct {
	id   uint64 // the lock's
	lock weak.Pointer[class.Lock]
	gen  uint32
}

// stands reports whether s's hold may still be the goroutine's own.
func (s lostSrc) stands() bool {
	l := s.lock.Value()
	return l != nil && l.ReadGen() == s.gen
}

// maxLostSrcs bounds an acquisition's lostSrcs: past it, it is lost.
// A Wait has no more sources than that.
const maxLostSrcs = MaxWaiting

// maxDropped bounds the chains proving remembers dropping. A chain
// forgotten there may be cached by the proof of an acquisition's read
// edges (R12) without its edges from a write hold: a missed edge.
const maxDropped = 8

// MaxProving bounds the edges from write holds that wait on one
// goroutine, and maxProvingAt those of one acquisition. An acquisition
// with more is not held back: its edges are added at once, as though the
// holds were proved. Past MaxProving, the oldest acquisitions are taken
// out: the edges of those whose lock the goroutine still holds (a
// nesting), whose holds stand, are added at once too (HoldEdges returns
// them), but those from a graph node (a lock, or every lock of a named
// class) with maxProvingFrom edges or more waiting on it, which are
// dropped. A deep nesting released in order needs about n²/2 at its
// deepest, at most n from one node; a goroutine that keeps locks for good
// (closed files' locks, of one class or many) and takes thousands of new
// chains under them has them nearly all from those, into locks it has
// released since: those are dropped, never guessed proved.
const (
	MaxProving   = 4096
	maxProvingAt = 1024
	// maxProvingFrom: past the bound, an edge whose hold's class has at
	// least this many edges waiting on it is dropped rather than added.
	maxProvingFrom = MaxProving / 4
)

// HoldEdges keeps es, the edges from write holds of one acquisition (all
// with the same Key and Epoch), in place of any waiting for the same Key
// (es sees them anew). It reports false, keeping nothing, if es has more
// than maxProvingAt edges. To stay within MaxProving it takes out the
// oldest acquisitions and returns their edges that still stand, for the
// caller to add at once. It keeps es itself: the caller must not change
// it.
func (p *proving) HoldEdges(es []Edge, epoch uint32) (out [][]Edge, ok bool) {
	if len(es) == 0 {
		return nil, true
	}
	key := es[0].Key
	if a := p.byKey[key]; a != nil {
		p.end(a)
	}
	p.undrop(key)
	if len(es) > maxProvingAt {
		return nil, false
	}
	for len(p.queue) > 0 && p.n+len(es) > MaxProving {
		a := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		if a.over {
			p.ended--
			continue
		}
		p.unindex(a)
		n := len(a.edges)
		// A lock taken and released under holds that outlast 4096
		// edges is a short section under holds kept long, or for good
		// (a file locked on close): only their goroutine's release
		// proves them. Its edges are dropped, a missed edge at worst.
		// So are those of a lock the goroutine no longer holds as its
		// own: handed off to another goroutine to release, or a wait
		// (WaitGroup.Wait, Once.Do) that has ended (R23).
		// (A read hold's validity says nothing of the goroutine's own:
		// any reader's hand-off makes every reader's entry stale, R13.)
		nested := !a.released && (a.toRead || p.holds(a.to))
		live := a.edges[:0] // a's own: filtered in place
		stand := true       // every edge's hold stands
		for _, e := range a.edges {
			p.perFrom[e.fromClass]--
			ok := e.Epoch == epoch && e.live()
			stand = stand && ok
			// A hold most edges wait on is one its goroutine keeps for
			// good or long past its edges: those are dropped too. The
			// others are added, as though proved.
			if nested && ok && p.perFrom[e.fromClass] < maxProvingFrom {
				live = append(live, e)
			}
			if p.perFrom[e.fromClass] <= 0 {
				delete(p.perFrom, e.fromClass)
			}
		}
		clear(a.edges[len(live):])
		a.edges = a.edges[:0] // counted out above
		if !nested && stand && !a.lost && !a.readLost && a.epoch == epoch {
			// Given up, not lost: cached (GivenUp), so that a loop of
			// sections under the kept holds stays on the fast path. (A
			// hold handed off makes the chain one to record anew.)
			p.givenUp = append(p.givenUp, a.key)
		} else if a.lost || a.readLost || len(live) < n {
			p.remember(a.key) // so that a read edge's proof does not cache it
			for i := range live {
				live[i].lost = true // nor the caller, adding them
			}
		}
		if len(live) > 0 {
			out = append(out, live)
		}
		p.n -= n
		p.retire(a)
	}
	a := &acquired{key: key, to: es[0].toID, toRead: es[0].Obs.ToRead, epoch: epoch, edges: es}
	p.queue = append(p.queue, a)
	if p.byKey == nil {
		p.byKey = make(map[chain.Key]*acquired)
		p.byFrom = make(map[uint64][]*acquired)
		p.perFrom = make(map[uint64]int)
		p.into = make(map[uint64][]*acquired)
	}
	p.into[a.to] = append(p.into[a.to], a)
	p.byKey[key] = a
	eachFrom(es, func(id uint64) {
		as := p.byFrom[id]
		if len(as) >= 64 && len(as)%64 == 0 {
			as = slices.DeleteFunc(as, func(a *acquired) bool { return a.over })
		}
		p.byFrom[id] = append(as, a)
	})
	for _, e := range es {
		p.perFrom[e.fromClass]++
	}
	p.n += len(es)
	return out, true
}

// end ends a, which is in the queue: its edges no longer wait. Once
// most of the queue has ended, the queue and byFrom are compacted.
func (p *proving) end(a *acquired) {
	if a.over {
		return
	}
	p.retire(a)
	p.ended++
	if p.ended > 32 && p.ended > len(p.queue)/2 {
		p.compact()
	}
}

// unindex takes a, out of the queue, out of byFrom.
func (p *proving) unindex(a *acquired) {
	eachFrom(a.edges, func(id uint64) { unfile(p.byFrom, id, a) })
}

// eachFrom calls f once with each lock held that edges of es are from, in
// their order. Linear in es: a deep nesting's acquisitions have hundreds
// of edges each.
func eachFrom(es []Edge, f func(id uint64)) {
	if len(es) <= 8 {
		for i, e := range es {
			if !slices.ContainsFunc(es[:i], func(g Edge) bool { return g.fromID == e.fromID }) {
				f(e.fromID)
			}
		}
		return
	}
	done := make(map[uint64]struct{}, len(es))
	for _, e := range es {
		if _, ok := done[e.fromID]; !ok {
			done[e.fromID] = struct{}{}
			f(e.fromID)
		}
	}
}

// retire marks a ended and forgets its edges.
func (p *proving) retire(a *acquired) {
	a.over = true
	p.unlose(a)
	for _, e := range a.edges {
		if p.perFrom[e.fromClass]--; p.perFrom[e.fromClass] <= 0 {
			delete(p.perFrom, e.fromClass)
		}
	}
	p.n -= len(a.edges)
	a.edges = nil
	if p.byKey[a.key] == a {
		delete(p.byKey, a.key)
	}
	unfile(p.into, a.to, a)
}

// unfile takes a out of m's list for id, and id out of m once its list
// is empty.
func unfile(m map[uint64][]*acquired, id uint64, a *acquired) {
	as := m[id]
	if i := slices.Index(as, a); i >= 0 { // there once: filed once per id (byFrom: per lock)
		as = slices.Delete(as, i, i+1)
	}
	if len(as) == 0 {
		delete(m, id)
	} else {
		m[id] = as
	}
}

// compact drops the ended acquisitions from the queue and from byFrom,
// and the locks byFrom has nothing left for.
func (p *proving) compact() {
	over := func(a *acquired) bool { return a.over }
	p.queue = slices.DeleteFunc(p.queue, over)
	p.ended = 0
	for l, as := range p.byFrom {
		if as = slices.DeleteFunc(as, over); len(as) == 0 {
			delete(p.byFrom, l)
		} else {
			p.byFrom[l] = as
		}
	}
}

// lose notes that edges of chain key from read holds were dropped
// unrecorded (waits.lost): from srcs, holds that stand, or, if srcs is
// empty, from holds another goroutine released (a Wait spoiled). The
// acquisition's edges from write holds that wait must not cache the
// chain when they are added. While srcs stand, seen again it is not
// recorded anew (see acquired.readLost); a spoiled Wait's acquisition is
// recorded anew at once.
func (p *proving) lose(key chain.Key, srcs []Src) {
	p.remember(key)
	a := p.byKey[key]
	if a == nil || a.over {
		return
	}
	if len(srcs) == 0 || len(a.lostSrcs)+len(srcs) > maxLostSrcs {
		a.lost = true
		return
	}
	a.readLost = true
	if p.lostBy == nil {
		p.lostBy = make(map[uint64][]*acquired)
	}
	for _, s := range srcs {
		a.lostSrcs = append(a.lostSrcs, lostSrc{id: s.Lock.ID, lock: weak.Make(s.Lock), gen: s.Gen})
		p.lostBy[s.Lock.ID] = append(p.lostBy[s.Lock.ID], a)
	}
}

// unlose takes a, which is ending, out of lostBy: it holds only the
// acquisitions that wait (a read hold handed off is never released by
// the goroutine).
func (p *proving) unlose(a *acquired) {
	for _, s := range a.lostSrcs {
		unfile(p.lostBy, s.id, a)
	}
	a.lostSrcs = nil
}

// ReadReleased is called when the goroutine has released itself its last
// read hold of the lock whose ID is id: the acquisitions whose edges from
// that hold were dropped (lose) are recorded anew when seen again, under
// a new hold.
func (p *proving) ReadReleased(id uint64) {
	as := p.lostBy[id]
	delete(p.lostBy, id)
	for _, a := range as {
		a.lost = true
		p.unlose(a) // lost: provingKey no longer looks at its sources
	}
}

// HasLostReads reports whether an acquisition's edges from a read hold
// were dropped while the hold stands: one load, for the release path.
func (p *proving) HasLostReads() bool { return len(p.lostBy) > 0 }

// provingKey reports whether edges of chain key of the given epoch wait,
// all standing, as do the read holds whose edges into it were dropped:
// the acquisition need not be recorded again. One length test when
// nothing waits.
func (p *proving) provingKey(key chain.Key, epoch uint32) bool {
	if p.n == 0 {
		return false
	}
	a := p.byKey[key]
	if a == nil || a.epoch != epoch || a.lost {
		return false
	}
	for i := range a.edges {
		if !a.edges[i].live() {
			return false
		}
	}
	for _, s := range a.lostSrcs {
		if !s.stands() {
			return false
		}
	}
	return true
}

// WaitsOnKey reports whether an edge of chain key waits: the chain must
// not be cached yet.
func (p *proving) WaitsOnKey(key chain.Key) bool { return p.byKey[key] != nil }

// HasProving reports whether any edge waits: one load, for the release
// path.
func (p *proving) HasProving() bool { return p.n > 0 }

// ProvingEdges returns the number of edges waiting.
func (p *proving) ProvingEdges() int { return p.n }

// Released is called when the goroutine itself releases a write hold of
// l that was still its own, before anything else can take l. The edges
// that waited on that hold are proved: TakeProved returns them. Edges of
// l seen under an earlier hold (l's count of holder changes moved since),
// or of another epoch than epoch, are dropped, and their chains
// remembered as dropped. It costs in the edges of l's acquisitions only.
// It reports whether any edge waited on l.
func (p *proving) Released(l *class.Lock, epoch uint32) bool {
	as := p.byFrom[l.ID]
	if len(as) == 0 {
		return false
	}
	delete(p.byFrom, l.ID)
	defer func() {
		if p.perFrom[l.Class.ID] <= 0 {
			delete(p.perFrom, l.Class.ID)
		}
	}()
	for _, a := range as {
		if a.over {
			continue
		}
		left := a.edges[:0]
		for _, e := range a.edges {
			switch {
			case e.fromID != l.ID:
				left = append(left, e)
			case e.Epoch == epoch && e.live():
				e.lost = a.lost || a.readLost
				p.proved = append(p.proved, e)
			default:
				a.lost = true
				p.remember(a.key)
			}
		}
		clear(a.edges[len(left):])
		p.n -= len(a.edges) - len(left)
		p.perFrom[l.Class.ID] -= len(a.edges) - len(left)
		if a.edges = left; len(left) == 0 {
			a.edges = a.edges[:0:0]
			p.end(a)
		}
	}
	return true
}

// GivenUp returns the chains of the sections HoldEdges pushed out, whose
// edges it dropped (their lock released since, under holds kept past the
// bound), and forgets them: the caller caches them, as though proved, so
// that a loop of sections under holds kept for good is not recorded
// anew at every Lock. Their edges are missed if the holds are released
// after all.
func (p *proving) GivenUp() []chain.Key {
	ks := p.givenUp
	p.givenUp = nil
	return ks
}

// holds reports whether the goroutine holds, as its own, the lock whose
// ID is id: always, for a proving no goroutine state embeds.
func (p *proving) holds(id uint64) bool {
	return p.owner == nil || p.owner.HoldsValid(id)
}

// ReleasedInto is called when the goroutine's last hold of the lock whose
// ID is id, which its acquisition recorded edges into (see ProvingInto),
// has ended: released by the goroutine (but in a Cond.Wait, whose caller
// holds the lock again on return), handed off to another goroutine to
// release (a write hold, at Prune), or a wait on it that returned. Each
// acquisition of the lock whose edges wait is a section that ended under
// the holds they are from.
func (p *proving) ReleasedInto(id uint64) {
	// The list is a released prefix, marked by an earlier call, and the
	// acquisitions appended since: marked from the newest back.
	as := p.into[id]
	for i := len(as) - 1; i >= 0 && !as[i].released; i-- {
		as[i].released = true
	}
}

// ProvingInto reports whether edges into the lock whose ID is id wait:
// the caller marks the hold (G.MarkProving) so that its release is seen
// (ReleasedInto).
func (p *proving) ProvingInto(id uint64) bool { return len(p.into[id]) > 0 }

// Into returns copies of the edges into to that wait and stand, of the
// goroutine's latest acquisition of to, for a goroutine about to wait for
// to: if the wait is proved a deadlock, no release can come, and the
// holds they rest on are the goroutine's own for good (see lockorder's
// provedByDeadlock). It looks at that acquisition's edges only.
func (p *proving) Into(to *class.Lock) []Edge {
	if p.n == 0 {
		return nil
	}
	as := p.into[to.ID]
	if len(as) == 0 {
		return nil
	}
	a := as[len(as)-1]
	var out []Edge
	for _, e := range a.edges {
		if e.live() {
			out = append(out, e)
		}
	}
	return out
}

// TakeProved returns the edges Released proved. The caller calls
// DoneProved once it is done with them.
func (p *proving) TakeProved() []Edge { return p.proved }

// DoneProved forgets the edges TakeProved returned, so that they keep no
// lock alive.
func (p *proving) DoneProved() {
	clear(p.proved)
	p.proved = p.proved[:0]
}

// HasProved reports whether Released proved edges that TakeProved has not
// returned yet.
func (p *proving) HasProved() bool { return len(p.proved) > 0 }

// DroppedKey reports whether an edge of chain key was dropped unproved
// lately: the chain must not be cached.
func (p *proving) DroppedKey(key chain.Key) bool {
	return key != 0 && slices.Contains(p.dropped[:], key)
}

// remember records that an edge of chain key was dropped unproved.
func (p *proving) remember(key chain.Key) {
	if !p.DroppedKey(key) {
		p.dropped[p.nextDrop] = key
		p.nextDrop = (p.nextDrop + 1) % maxDropped
	}
}

// undrop forgets that edges of chain key were dropped: they are seen
// anew.
func (p *proving) undrop(key chain.Key) {
	if i := slices.Index(p.dropped[:], key); i >= 0 {
		p.dropped[i] = 0
	}
}
