//go:build !syncwatch_off

package lockorder

import (
	"maps"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// The slow path of the engine: recording new order edges, finding the
// cycles they close, and dropping the nodes of dead locks.

// recordEdges adds an edge from every lock gs holds to e's lock, taken at
// stack st, and reports the cycles they close. It runs once per new lock
// chain. The edges from read holds wait on gs (see holdReadEdges), and so
// do those from write holds another goroutine may release (see
// holdWriteEdges); the others are added at once, and the chain is cached
// when none waits.
func recordEdges(gs *held.G, e held.Entry, st stack.ID) {
	writtenHolds(gs)
	if tooDeep(gs) {
		// Nothing to record (R25): cached, so that a repeat takes the
		// fast path. Its pairs of locks are unseen (R26).
		cache(gs, e.Chain, e.Lock)
		losePairs(gs)
		return
	}
	obs, proving, writers, waiting := observe(gs, e, st, time.Now())
	var now, older [][]held.Edge
	if len(proving) > 0 {
		var kept bool
		if older, kept = holdWriteEdges(gs, e, proving); !kept {
			now, proving = [][]held.Edge{proving}, nil
		}
	}
	eng.mu.Lock()
	again := sightHolds(gs, e.Lock)
	found := addObserved(e.Lock, obs, nil)
	if !waiting && len(proving) == 0 {
		cache(gs, e.Chain, e.Lock)
	}
	var vs []Violation
	if len(found) > 0 {
		vs = cycleViolations(found, gs.ID(), st)
	}
	for _, es := range now {
		vs = addWaited(gs.ID(), es, vs)
	}
	for _, es := range older {
		vs = addWaited(gs.ID(), es, vs)
		cacheAdded(gs, es) // as though proved: not recorded again each time
	}
	if ks := gs.GivenUp(); len(ks) > 0 {
		cacheGivenUp(gs, ks)
	}
	if !e.Read && e.Lock.Class.Gated() {
		vs = append(vs, narrowWriters(e.Lock.Class, writers)...)
	}
	vs = recheckRoles(again, gs.ID(), vs)
	eng.mu.Unlock()
	publishAll(vs)
}

// maxEdgeDepth bounds the holds an acquisition records order edges from
// (docs/RULES.md R25): an acquisition made holding as many locks or more
// records none. A nesting of n locks records n(n-1)/2 edges: without a
// bound, a goroutine that locks in a loop and never unlocks (a lost
// Unlock per item) would make the graph grow with the square of the locks
// it holds.
const maxEdgeDepth = 256

// tooDeep reports whether gs holds too many locks for its acquisition to
// record edges (maxEdgeDepth).
func tooDeep(gs *held.G) bool { return gs.Len() >= maxEdgeDepth }

// cycleViolations returns the reports of the cycles found, closed by
// goroutine gid's acquisition at stack st. Out of line: a Violation built
// in recordEdges's frame made it large enough that a new goroutine's
// first new chain grew its stack.
//
//go:noinline
func cycleViolations(found []graph.Cycle, gid int64, st stack.ID) []Violation {
	vs := make([]Violation, 0, len(found))
	for _, c := range found {
		vs = append(vs, cycleViolation(c, gid, st))
	}
	return vs
}

// observed is an edge an acquisition adds: from a hold of from into the
// lock acquired, as o saw it.
type observed struct {
	from *class.Lock
	o    graph.Observation
}

// observe returns the edges an acquisition by gs of e's lock, at stack st
// at time now, adds from gs's holds (R1), with what held each back when
// it was seen (gates, R6 to R9 and R18; the sighting, R21): those to add
// now, and apart those from write holds another goroutine may release,
// which must wait for their proof (R23); the writers' gate they were
// taken under; and whether edges from read holds wait on gs instead (R12:
// those are not returned). It publishes nothing: the caller has called
// writtenHolds, which may.
func observe(gs *held.G, e held.Entry, st stack.ID, now time.Time) (obs []observed, proving []held.Edge, writers graph.Gate, waiting bool) {
	clockOf(gs)
	ents := gs.Entries()
	writers = gate(ents, e.Lock)
	waiting = holdReadEdges(gs, e, writers, st, now)
	readers := readGate(gs, e.Lock)
	n := 0
	for i := range ents {
		if h := &ents[i]; !h.Read && h.Lock.Kind.WritesHandOff() {
			n++
		}
	}
	obs = make([]observed, 0, len(ents)-n)
	if n > 0 {
		proving = make([]held.Edge, 0, n)
	}
	epoch := readEpoch.Load()
	for i := range ents {
		h := &ents[i]
		if h.Lock == e.Lock || (waiting && handedOver(h)) {
			continue
		}
		o := graph.Observation{
			Gate:      writers.Without(graph.NodeID(h.Lock.ID)),
			RGate:     readers.Without(graph.NodeID(h.Lock.ID)),
			FromRead:  h.Read,
			FromLock:  graph.NodeID(h.Lock.ID),
			ToRead:    e.Read,
			Goroutine: gs.ID(),
			Stack:     uint32(st),
			Time:      now,
			Sight:     sighting(gs, i),
		}
		if !h.Lock.Kind.Exclusive() || h.Read && !readers.Has(o.FromLock) {
			o.FromLock = 0 // a hold that is not exclusive, or a read hold R-RW does not count
		}
		if !h.Read && h.Lock.Kind.WritesHandOff() {
			proving = append(proving, held.NewEdge(h.Lock, e.Lock, o, epoch))
			continue
		}
		obs = append(obs, observed{from: h.Lock, o: o})
	}
	return obs, proving, writers, waiting
}

// addObserved adds the edges obs into lock to to the graph, appending the
// cycles they close to found. Called with eng.mu held.
func addObserved(to *class.Lock, obs []observed, found []graph.Cycle) []graph.Cycle {
	for _, ob := range obs {
		if c := addEdge(ob.from, to, ob.o); c != nil {
			found = append(found, c)
		}
	}
	return found
}

// addEdge adds the sighting o of "to taken while from is held" to the
// graph, between the classes' nodes or, for two locks of one class, the
// instances' (R2), and returns the cycle it closes, if any. A lock taken
// under itself is no edge. Called with eng.mu held.
func addEdge(from, to *class.Lock, o graph.Observation) graph.Cycle {
	same := from.Class == to.Class
	f, t := node(from, same), node(to, same)
	if f == t {
		return nil
	}
	_, _, c := eng.graph.Add(f, t, o, canBlock)
	return c
}

// everyPairSeen reports whether every pair of locks joined under holds of
// from's, for reading if fromRead, and into to's class reaches sightPair
// (RULES.md R26): the chain cache keys the edges into a lock of a named
// class by the class, unless a hold names the lock (namesLock), so that
// the next lock of the class taken under the same holds records nothing.
// Where the hold itself does not name it, that is assumed.
func everyPairSeen(from, to *class.Lock, fromRead bool) bool {
	return !to.Class.Named || !to.Kind.Lock() || namesLock(&held.Entry{Lock: from, Read: fromRead}, to)
}

// sightHolds tells the graph of the pairs of locks gs's acquisition of l
// joins, one for each lock gs holds (RULES.md R26), whether the edges
// they make reach the graph now, later or never, and returns the edges
// to search again. Called with eng.mu held.
func sightHolds(gs *held.G, l *class.Lock) []*graph.Edge {
	sight := eng.sightPair
	if sight == nil {
		return nil
	}
	var again []*graph.Edge
	ents := gs.Entries()
	for i := range ents {
		if h := &ents[i]; h.Lock != l {
			again = append(again, sight(h.Lock, l, h.Read)...)
		}
	}
	return again
}

// enableRoles makes the engine tell the graph its pairs of locks (R26),
// at the first lock of a named class (see eng.sightPair).
func enableRoles() {
	if eng.rolesOn.Load() {
		return
	}
	eng.mu.Lock()
	eng.sightPair = sightPair
	eng.graph.EnableRoles()
	eng.rolesOn.Store(true)
	eng.mu.Unlock()
}

// sightPair tells the graph that lock from, held for reading if
// fromRead, and lock to were joined (R26), between their classes' nodes,
// and returns the edges to search again. Every pair is known only where
// the chain cache records each pair (everyPairSeen), and while every
// acquisition of the process was seen by its holder's state (pairsSeen):
// otherwise every pair is lost. Called with eng.mu held.
func sightPair(from, to *class.Lock, fromRead bool) []*graph.Edge {
	if !pairsSeen() {
		return eng.graph.LoseAllPairs()
	}
	if !from.Class.Named && !to.Class.Named {
		return nil // each a class of its own: the pair is the nodes (graph.SetSolo)
	}
	f, t := node(from, false), node(to, false)
	known := everyPairSeen(from, to, fromRead)
	if known {
		trackPairs(from)
		trackPairs(to)
	}
	return eng.graph.Sight(f, t, [2]graph.NodeID{pairID(from), pairID(to)}, known)
}

// pairID returns the id lock l goes by in the graph's pairs (R26): its
// own, or, for a class of its own, its class's, which its node has.
func pairID(l *class.Lock) graph.NodeID {
	if l.Class.Named {
		return graph.NodeID(l.ID)
	}
	return graph.NodeID(l.Class.ID)
}

// pairsSeen reports whether every acquisition of the process was seen
// with the holds it was made under: the mode has been check since the
// start (initRule; a test may say it was, eng.assumeSeen), no
// goroutine's holds were dropped (held.Dropped), and no used lock was
// copied (a copy shares its original's identity until rebound,
// eng.copied). Called with eng.mu held.
func pairsSeen() bool {
	return (eng.assumeSeen || initRule.Load()) && !held.Dropped() && !eng.copied.Load()
}

// sightOnly tells the graph of the pairs gs's acquisition of l joins, for
// an acquisition that records no edge now but could have waited: a
// forgetful goroutine's Do on a done Once, a Wait kept for its group's
// first Go (R22). Their pairs are what the run did (R26).
func sightOnly(gs *held.G, l *class.Lock) {
	if !eng.rolesOn.Load() {
		return
	}
	eng.mu.Lock()
	vs := recheckRoles(sightHolds(gs, l), gs.ID(), nil)
	eng.mu.Unlock()
	publishAll(vs)
}

// recheckRoles searches again through the edges es that sightPair or
// losePairs returned, appending to vs the reports of the cycles found,
// as goroutine gid's. Called with eng.mu held.
func recheckRoles(es []*graph.Edge, gid int64, vs []Violation) []Violation {
	for i, e := range es {
		if slices.Contains(es[:i], e) {
			continue
		}
		if c := eng.graph.Recheck(e, canBlock); c != nil {
			vs = append(vs, cycleViolation(c, gid, stack.ID(e.First.Stack)))
		}
	}
	return vs
}

// losePairs tells the graph that its pairs of locks are incomplete for
// good (R26: gs made an acquisition R25 records no edge of), and
// publishes the cycles R26 held back, which may now deadlock. Once done,
// it costs the engine's lock alone, on a new chain that deep.
func losePairs(gs *held.G) {
	eng.mu.Lock()
	vs := recheckRoles(eng.graph.LoseAllPairs(), gs.ID(), nil)
	eng.mu.Unlock()
	publishAll(vs)
}

// trackPairs arranges for l's pairs to be dropped from the graph once l
// is unreachable (R26), as its nodes are (see node). A lock of a class
// of its own takes its pairs with its node.
func trackPairs(l *class.Lock) {
	if l.Class.Named && l.Track() {
		runtime.AddCleanup(l, forget, [2]graph.NodeID{graph.NodeID(l.ID), graph.NodeID(l.Class.ID)})
	}
}

// Edges from read holds wait on their goroutine (held.Wait), their chain
// uncached, until it releases the hold itself with the lock's read
// generation unchanged: see RULES.md R12 and R13. An edge from a write
// hold is added at once.

// readEpoch is bumped by resetEngine, under eng.mu: edges that waited
// across a Reset are forgotten with the graph.
var readEpoch atomic.Uint32

// holdReadEdges makes the edges from gs's read holds into e's lock,
// acquired at stack st at time now with the locks writers held for
// writing, wait on gs. It reports whether there are any: they are not
// added now, whether they wait or not. (They do not if the acquisition
// has more than held.MaxWaiting: dropped, as the oldest edges waiting are
// to make room past that bound; the chain is not cached, so it is
// recorded again when seen again. A hold that may have been handed off
// never adds an edge.)
func holdReadEdges(gs *held.G, e held.Entry, writers graph.Gate, st stack.ID, now time.Time) bool {
	var srcs []held.Src
	ents := gs.Entries()
	for i := range ents {
		h := &ents[i]
		if !handedOver(h) || h.Lock == e.Lock || slices.ContainsFunc(srcs, func(s held.Src) bool { return s.Lock == h.Lock }) {
			continue
		}
		srcs = append(srcs, held.Src{Lock: h.Lock, Gen: h.Gen})
	}
	if len(srcs) == 0 {
		return false
	}
	gs.Hold(held.Wait{
		Key:    readWaitKey(gs, e.Chain, e.Lock),
		To:     e.Lock,
		ToRead: e.Read,
		Gate:   writers,
		Stack:  uint32(st),
		Time:   now,
		Epoch:  readEpoch.Load(),
		Srcs:   srcs,
	})
	return true
}

// handedOver reports whether hold h may be another goroutine's to
// release: a read hold of a kind that hands read holds off (an RWMutex's;
// a WaitGroup's Go'd function holds the group for reading, and always
// releases that hold itself).
func handedOver(h *held.Entry) bool { return h.Read && h.Lock.Kind.HandsOff() }

// provedReads adds the edges from read holds of l that waited on gs, now
// that gs has released itself its last read hold of l, and reports the
// cycles they close. It caches the chains whose every edge is now in the
// graph. It publishes with no lock held: the caller has released l.
func provedReads(gs *held.G, l *class.Lock) {
	epoch := readEpoch.Load()
	ws := gs.Settle(l, epoch)
	if len(ws) == 0 {
		return
	}
	clockOf(gs) // for its chains' owner: their edges from write holds have gs's sightings
	var vs []Violation
	eng.mu.Lock()
	if readEpoch.Load() != epoch {
		// A Reset since Settle: what waited is forgotten.
		eng.mu.Unlock()
		return
	}
	for _, w := range ws {
		for _, s := range w.Srcs {
			var hold graph.NodeID
			if unhanded(s.Lock) {
				// Proved its own, and no read hold of it ever handed
				// over: held while the edge waits (R-RW).
				hold = graph.NodeID(s.Lock.ID)
			}
			o := graph.Observation{
				Gate:      w.Gate.Without(graph.NodeID(s.Lock.ID)),
				FromLock:  hold,
				FromRead:  true,
				ToRead:    w.ToRead,
				Goroutine: gs.ID(),
				Stack:     w.Stack,
				Time:      w.Time,
			}
			if c := addEdge(s.Lock, w.To, o); c != nil {
				vs = append(vs, cycleViolation(c, gs.ID(), stack.ID(w.Stack)))
			}
		}
		if w.Complete {
			for _, k := range w.Keys() {
				if !gs.WaitsOnKey(k) && !gs.DroppedKey(k) { // no edge from a write hold waits (R23)
					chains.Add(k, clockOf(gs).Serial) // salted when it waited: see readWaitKey
				}
			}
		}
	}
	eng.mu.Unlock()
	publishAll(vs)
}

// Edges from write holds of a kind another goroutine may release (a
// Mutex's, an RWMutex's write holds) wait on their goroutine, their chain
// uncached, until it releases the hold itself: see RULES.md R23.

// holdWriteEdges makes the edges es, from gs's write holds into e's
// lock, wait on gs, and marks their holds so that their release looks
// for them. It reports false, holding nothing, if there are more than
// held.maxProvingAt: the caller adds them at once. It returns the oldest
// edges waiting on gs if they would be more than held.MaxProving, for the
// caller to add at once (addWaited). Both are added as they were seen, as
// though proved: a limit of R23.
func holdWriteEdges(gs *held.G, e held.Entry, es []held.Edge) ([][]held.Edge, bool) {
	for i := range es {
		if f, _ := es[i].Locks(); f != nil {
			f.Gate.MarkUnder() // a hand-off of f now shows it to gate (R24)
		}
	}
	key := readWaitKey(gs, e.Chain, e.Lock)
	for i := range es {
		es[i].Key = key
	}
	out, ok := gs.HoldEdges(es, es[0].Epoch)
	if !ok {
		return nil, false
	}
	ents := gs.Entries()
	for i := range ents {
		if h := &ents[i]; !h.Read && h.Lock.Kind.WritesHandOff() && h.Lock != e.Lock {
			gs.MarkProving(i)
		}
	}
	return out, true
}

// addWaited adds es, edges from write holds that waited on goroutine gid,
// appending the reports of the cycles they close to vs. Called with
// eng.mu held.
func addWaited(gid int64, es []held.Edge, vs []Violation) []Violation {
	epoch := readEpoch.Load()
	for _, e := range es {
		if e.Epoch != epoch {
			continue // seen before a Reset
		}
		f, t := e.Locks()
		if f == nil {
			continue // a lock collected: its nodes went with it
		}
		if c := addEdge(f, t, e.Obs); c != nil {
			vs = append(vs, cycleViolation(c, gid, stack.ID(e.Obs.Stack)))
		}
	}
	return vs
}

// provedWrites adds the edges from write holds that gs's release of a
// hold of its own proved (held.proving.Released), and reports the cycles
// they close. It caches the chains none of whose edges waits any more. It
// publishes with no lock held: the caller has released the lock.
func provedWrites(gs *held.G) {
	es := gs.TakeProved()
	if len(es) == 0 {
		return
	}
	eng.mu.Lock()
	vs := addWaited(gs.ID(), es, nil)
	cacheAdded(gs, es)
	eng.mu.Unlock()
	gs.DoneProved() // before a handler runs, which may release locks of its own
	publishAll(vs)
}

// cacheGivenUp caches the chains ks of sections whose edges gs gave up
// past R23's bound (held.proving.GivenUp), unless an edge of theirs from
// a read hold waits or was dropped lately. Called with eng.mu held.
func cacheGivenUp(gs *held.G, ks []chain.Key) {
	me := clockOf(gs).Serial
	for _, k := range ks {
		cacheSettled(gs, k, me)
	}
}

// cacheSettled caches chain k of gs, whose clock's serial is me, unless
// an edge of it waits still, from a write hold or a read hold, or was
// dropped lately. Called with eng.mu held.
func cacheSettled(gs *held.G, k chain.Key, me uint64) {
	if !gs.WaitsOnKey(k) && !gs.WaitsForKey(k) && !gs.DroppedKey(k) {
		chains.Add(k, me) // salted when it waited: see readWaitKey
	}
}

// cacheAdded caches the chains of es, edges from write holds of gs that
// addWaited added (proved, or past R23's bounds), none of whose edges
// waits any more, was lost or dropped lately, or is of another epoch.
// Linear in es: a deep nesting's release proves hundreds of chains.
// Called with eng.mu held.
func cacheAdded(gs *held.G, es []held.Edge) {
	me, epoch := clockOf(gs).Serial, readEpoch.Load()
	keep := func(k chain.Key) { cacheSettled(gs, k, me) }
	if len(es) <= 8 {
		for i, e := range es {
			k := e.Key
			if slices.ContainsFunc(es[:i], func(f held.Edge) bool { return f.Key == k }) {
				continue
			}
			if !slices.ContainsFunc(es[i:], func(f held.Edge) bool { return f.Key == k && (f.Lost() || f.Epoch != epoch) }) {
				keep(k)
			}
		}
		return
	}
	bad := make(map[chain.Key]bool)
	var keys []chain.Key
	for _, e := range es {
		b, ok := bad[e.Key]
		if !ok {
			keys = append(keys, e.Key)
		}
		bad[e.Key] = b || e.Lost() || e.Epoch != epoch
	}
	for _, k := range keys {
		if !bad[k] {
			keep(k)
		}
	}
}

// Rule R18 (R-RW) of docs/RULES.md: a lock held for writing around one
// edge of a cycle and for reading around another excludes the two, while
// no read hold of it was released by a goroutine that did not hold it
// (its read generation is 0). The first such release (loosened) searches
// again the cycles this held back.

// unhanded reports whether a read hold of l can count under R-RW: l is
// of an exclusive kind that can be read-locked (an RWMutex), and none of
// its read holds was ever released by a goroutine that did not hold it.
func unhanded(l *class.Lock) bool {
	return l.Kind.Exclusive() && l.Kind.Readable() && l.ReadGen() == 0
}

// readGate returns the locks other than l that gs validly holds for
// reading and whose read holds can count under R-RW.
func readGate(gs *held.G, l *class.Lock) graph.Gate {
	var ids []graph.NodeID
	ents := gs.Entries()
	for i := range ents {
		if h := &ents[i]; h.Read && h.Lock != l && unhanded(h.Lock) && gs.Valid(h) {
			ids = append(ids, graph.NodeID(h.Lock.ID))
		}
	}
	if len(ids) == 0 {
		return graph.Gate{}
	}
	return graph.NewGate(ids)
}

// loosened is called once a read hold of l was first released by a
// goroutine that did not hold it (its read generation is 1 now): l's
// read holds count for nothing under R-RW from now on. It returns the
// cycles that R-RW held back on l, for the caller to publish once l is
// released.
func loosened(l *class.Lock) []Violation {
	var vs []Violation
	eng.mu.Lock()
	for _, e := range eng.graph.Loosen(graph.NodeID(l.ID)) {
		if cy := eng.graph.Recheck(e, canBlock); cy != nil {
			vs = append(vs, cycleViolation(cy, e.First.Goroutine, stack.ID(e.First.Stack)))
		}
	}
	eng.mu.Unlock()
	runtime.AddCleanup(l, forgetLock, graph.NodeID(l.ID))
	return vs
}

// readsHeld reports whether gs validly holds l for reading.
func readsHeld(gs *held.G, l *class.Lock) bool {
	ents := gs.Entries()
	for i := range ents {
		if h := &ents[i]; h.Lock == l && h.Read && gs.Valid(h) {
			return true
		}
	}
	return false
}

// The writers' gate of a class: the locks held for writing at every write
// of it that could wait, learnt at its first write and narrowed at each
// write under fewer locks (RULES.md R7; the ∃ rule R8 uses it too).
// eng.wgates holds it by class; every graph node of the class has a copy.

// setWritersGate makes w the writers' gate of class c and of its graph
// nodes. Called with eng.mu held.
func setWritersGate(c *class.Class, w graph.Gate) {
	if eng.wgates == nil {
		eng.wgates = make(map[uint64]graph.Gate)
	}
	if w.Len() == 0 {
		delete(eng.wgates, c.ID)
	} else {
		eng.wgates[c.ID] = w
	}
	eng.classes.each(c.ID, func(id graph.NodeID) { eng.graph.SetWritersGate(id, w) })
}

// firstWrite marks l's class as having writers, with the writers' gate of
// the locks gs holds for writing (none if gs is nil: a TryLock). Read
// acquisitions of the class can block from now on, so read-only cycles
// through it that were harmless may now deadlock: look for them again.
func firstWrite(gs *held.G, l *class.Lock) {
	c := l.Class
	var wg graph.Gate
	if gs != nil {
		wg = heldGate(gs, l)
	}
	var vs []Violation
	eng.mu.Lock()
	if !c.MarkWritten(wg.Len() > 0) {
		// Another goroutine's write came first: this one narrows its gate.
		if c.Gated() {
			vs = narrowWriters(c, wg)
		}
	} else {
		if wg.Len() > 0 {
			node(l, false) // for the gate to go with the class's node
			setWritersGate(c, wg)
		}
		vs = recheckInto(c, false)
	}
	eng.mu.Unlock()
	publishAll(vs)
}

// writeUnder narrows the writers' gate of l's class to the locks gs holds
// for writing, for a write acquisition of l that records no chain.
func writeUnder(gs *held.G, l *class.Lock) {
	wg := heldGate(gs, l)
	eng.mu.Lock()
	vs := narrowWriters(l.Class, wg)
	eng.mu.Unlock()
	publishAll(vs)
}

// heldGate returns the locks other than l that gs validly holds for
// writing, of exclusive kinds. (A write deeper than R25's bound is not
// seen: its caller is not called.)
func heldGate(gs *held.G, l *class.Lock) graph.Gate {
	var ids []graph.NodeID
	ents := gs.Entries()
	for i := range ents {
		if h := &ents[i]; exclusiveWrite(h) && h.Lock != l && gs.Valid(h) {
			ids = append(ids, graph.NodeID(h.Lock.ID))
		}
	}
	return graph.NewGate(ids)
}

// narrowWriters narrows c's writers' gate to its intersection with wg,
// the locks held at a write acquisition of c, and returns the cycles
// through read edges into c that this made possible. Called with eng.mu
// held.
func narrowWriters(c *class.Class, wg graph.Gate) []Violation {
	if !c.Gated() {
		return nil
	}
	old, ok := eng.wgates[c.ID]
	kept := old.Intersect(wg)
	if ok && kept.Len() == old.Len() {
		return nil
	}
	if kept.Len() == 0 {
		c.Ungate()
	}
	setWritersGate(c, kept)
	return recheckInto(c, true)
}

// recheckInto searches again for cycles through the edges into c's nodes,
// only those that take c for reading if readOnly, and returns their
// reports. Called with eng.mu held.
func recheckInto(c *class.Class, readOnly bool) []Violation {
	if !eng.graph.Cyclic() {
		return nil
	}
	var vs []Violation
	eng.classes.each(c.ID, func(id graph.NodeID) {
		for _, e := range eng.graph.In(id) {
			if readOnly && e.ToWrite {
				continue
			}
			if cy := eng.graph.Recheck(e, canBlock); cy != nil {
				vs = append(vs, cycleViolation(cy, e.First.Goroutine, stack.ID(e.First.Stack)))
			}
		}
	})
	return vs
}

// gate returns the ids of the locks held for writing other than b, of
// exclusive kinds. The gate of an edge a->b is gate(ents, b).Without(a):
// the locks that serialize every goroutine taking the edge. Computed once
// for all the edges into b, and shared by their gates, it keeps a new lock
// taken under k others at O(k log k), where a gate per edge cost
// O(k² log k).
func gate(ents []held.Entry, b *class.Lock) graph.Gate {
	var ids []graph.NodeID
	for i := range ents {
		if h := &ents[i]; exclusiveWrite(h) && h.Lock != b {
			ids = append(ids, graph.NodeID(h.Lock.ID))
		}
	}
	return graph.NewGate(ids)
}

// exclusiveWrite reports whether hold h can hold a cycle back as a write
// hold: it is one, and of an exclusive kind. Rules R6 to R10 assume that
// a write hold has one holder; a hold that has not is no gate, no
// writers' gate and no Src (RULES.md).
func exclusiveWrite(h *held.Entry) bool { return !h.Read && h.Lock.Kind.Exclusive() }

// canBlock reports whether the acquisition along e can block: a write
// acquisition always can; a read acquisition only if the lock has writers
// (RULES.md R4).
func canBlock(e *graph.Edge) bool {
	if e.ToWrite {
		return true
	}
	n, ok := eng.nodes[e.To]
	return !ok || n.cls.Written()
}

// node returns l's graph node, its instance node when instance is set,
// creating it. Called with eng.mu held.
func node(l *class.Lock, instance bool) graph.NodeID {
	id := graph.NodeID(l.Class.ID)
	if instance {
		id = graph.NodeID(l.ID)
	}
	if eng.nodes == nil {
		eng.nodes = make(map[graph.NodeID]nodeInfo)
	}
	if _, ok := eng.nodes[id]; !ok {
		eng.nodes[id] = nodeInfo{cls: l.Class, label: l.Label(), id: uint64(id), instance: instance}
		eng.peak = max(eng.peak, len(eng.nodes))
		eng.classes.add(l.Class.ID, id)
		eng.graph.Node(id, "")
		if !l.Class.Named {
			eng.graph.SetSolo(id)
		}
		if l.Class.Gated() {
			eng.graph.SetWritersGate(id, eng.wgates[l.Class.ID])
		}
		if !instance {
			// What the graph learns of a named class must outlive its
			// locks, for the next lock of that name to find.
			class.Keep(l.Class)
		}
		if (instance || !l.Class.Named) && l.Track() {
			// Drop the lock's nodes when it becomes unreachable, so that
			// programs creating many short-lived locks stay bounded.
			runtime.AddCleanup(l, forget, [2]graph.NodeID{graph.NodeID(l.ID), graph.NodeID(l.Class.ID)})
		}
	}
	return id
}

// forget removes a dead lock's nodes. A named class's node is removed
// only when the class is freed (forgetClass).
func forget(ids [2]graph.NodeID) {
	eng.mu.Lock()
	defer eng.mu.Unlock()
	eng.graph.Forget(ids[0])
	for _, id := range ids {
		if n, ok := eng.nodes[id]; ok && (graph.NodeID(n.cls.ID) != id || !n.cls.Named) {
			eng.graph.Remove(id)
			delete(eng.nodes, id)
			eng.classes.remove(n.cls.ID, id)
			delete(eng.wgates, uint64(id))
		}
	}
	// Go maps keep their peak size: rebuild once most nodes are gone.
	if eng.peak >= 4096 && len(eng.nodes) <= eng.peak/4 {
		nodes := make(map[graph.NodeID]nodeInfo, len(eng.nodes))
		maps.Copy(nodes, eng.nodes)
		eng.nodes, eng.peak = nodes, len(nodes)
	}
}

// forgetClass removes the node of a named class that no lock of is alive,
// freed for want of room among the dormant classes (class.Forget).
func forgetClass(c *class.Class) {
	eng.mu.Lock()
	defer eng.mu.Unlock()
	id := graph.NodeID(c.ID)
	if n, ok := eng.nodes[id]; ok && n.cls == c {
		eng.graph.Remove(id)
		delete(eng.nodes, id)
		eng.classes.remove(c.ID, id)
	}
	delete(eng.wgates, c.ID)
}

// forgetWriters forgets the writers' gate of every gated class the graph
// knows of, unwriting the classes, and the chain cache if a gate went,
// when the mode leaves check (RULES.md R15). The edges stay in the graph.
func forgetWriters() {
	eng.mu.Lock()
	defer eng.mu.Unlock()
	forgot := false
	for _, n := range eng.nodes {
		if c := n.cls; c.Gated() {
			setWritersGate(c, graph.Gate{})
			c.Unwrite()
			forgot = true
		}
	}
	if forgot {
		chains.Clear()
	}
}

// writtenHolds marks as written the classes of gs's write holds that are
// not: locks acquired before a Reset forgot their class's writes
// (class.Unwrite), and held since. A reader may wait for such a
// holder. It is slow-path work, before recording gs's edges.
func writtenHolds(gs *held.G) {
	ents := gs.Entries()
	for i := range ents {
		if h := &ents[i]; !h.Read && !h.Lock.Class.Written() && !(h.Init && h.Lock.InitHeld()) && !h.Unseen() {
			// (An initialisation write held uncontended is no write.)
			firstWrite(nil, h.Lock) // written, with no writers' gate
		}
	}
}

// resetEngine forgets the graph and the chain cache, and with them the
// named classes no lock of is alive.
func resetEngine() {
	eng.mu.Lock()
	for id, n := range eng.nodes {
		if graph.NodeID(n.cls.ID) == id {
			class.Unkeep(n.cls)
		}
		// The writes the class's writers' gate was learnt from are
		// forgotten with the chains that stood for them: the next write
		// is the first again, and learns the gate afresh.
		n.cls.Unwrite()
	}
	eng.wgates = nil
	forgetUngated()
	readEpoch.Add(1)
	eng.graph.Reset()
	eng.nodes, eng.peak = nil, 0
	eng.classes = byClass{}
	chains.Clear()
	eng.mu.Unlock()
}
