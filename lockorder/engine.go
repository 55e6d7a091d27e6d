//go:build !syncwatch_off

package lockorder

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// The checking engine. Its hot path (a lock sequence seen before) touches
// only the calling goroutine's held stack and the lock-free chain cache.
// Everything under eng.mu is slow-path work: recording new edges, searching
// for cycles, dropping dead locks. No user code runs under eng.mu.
var (
	chains chain.Set
	eng    struct {
		mu    sync.Mutex
		graph graph.Graph
		nodes map[graph.NodeID]nodeInfo
		peak  int // most nodes since eng.nodes was last rebuilt
	}
)

// nodeInfo is what the engine knows of a graph node. It must not refer to
// the lock itself, or the lock could never be collected; its names are
// formatted only when a report or a picture needs them.
type nodeInfo struct {
	cls      *class.Class
	label    class.Label
	id       uint64
	instance bool
}

// ref returns the node's name for reports.
func (n nodeInfo) ref() LockRef {
	if n.instance {
		return LockRef{Name: n.label.Name(), Class: n.label.ClassName(), ID: n.id}
	}
	name := n.label.ClassName()
	return LockRef{Name: name, Class: name, ID: n.id}
}

const (
	elemRead = 1 << iota
	elemTry
)

func elemOf(id uint64, read, try bool) uint64 {
	e := id << 2
	if read {
		e |= elemRead
	}
	if try {
		e |= elemTry
	}
	return e
}

// newLockState returns the identity of a new lock of class c (nil for a
// class of its own), with its chain keys computed.
//
// A chain key is made of lock instances, not classes: the graph tells
// instances of one class apart (two of them taken together are ordered by
// instance, and a gate is a particular lock), so the cache that stands
// for "these edges are recorded" must too. Edges themselves are still
// recorded between classes.
func newLockState(c *class.Class, kind string, addr uintptr) *class.Lock {
	l := class.New(c, kind, addr)
	ew, er := elemOf(l.ID, false, false), elemOf(l.ID, true, false)
	l.SetKeys(ew, uint64(chain.Extend(0, ew)), er, uint64(chain.Extend(0, er)))
	return l
}

// current returns the calling goroutine's state under mode word w.
func current(w uint32) *held.G {
	gs := held.Current()
	gs.Retag(w)
	return gs
}

// enter runs before a blocking acquisition of l by gs: it reports a
// recursive acquisition, records the order edges the acquisition adds and
// reports the cycles they close, all before the caller can block, and then
// pushes l. The entry does not count as a hold until the caller records
// itself as l's holder (for a write) once l is acquired. It reports whether
// gs already held l; if so the caller must call reacquired after acquiring.
//
// The callers inline the common case themselves: nothing held and l's class
// already known to have writers.
func enter(gs *held.G, l *class.Lock, read bool) bool {
	if !read && !l.Class.Written() {
		firstWrite(l.Class)
	}
	e := held.Entry{Lock: l, Read: read, Elem: l.Elem(read)}
	if gs.Len() == 0 {
		e.Chain = chain.Key(l.Chain(read))
	} else {
		e = prepareNested(gs, e)
	}
	if read {
		e.Gen = l.ReadGen()
	}
	gs.Push(e)
	return e.Again
}

// reacquired drops the older entries of l after a recursive acquisition
// went through: they are stale, since l was released by another goroutine
// before it could be taken again.
func reacquired(gs *held.G, l *class.Lock) {
	ents := gs.Entries()
	for i := len(ents) - 2; i >= 0; i-- {
		if ents[i].Lock == l && !ents[i].Read {
			gs.Remove(i)
			ents = gs.Entries()
		}
	}
}

// holds records gs as the writer holding l, once l is acquired.
func holds(gs *held.G, l *class.Lock) {
	if id := gs.ID(); l.Holder() != id {
		l.SetHolder(id)
	}
}

func prepareNested(gs *held.G, e held.Entry) held.Entry {
	l := e.Lock
	var again *held.Entry
	stale := false
	ents := gs.Entries()
	for i := range ents {
		if h := &ents[i]; h.Lock == l {
			if !gs.Valid(h) {
				stale = true
			} else if again == nil || !h.Read {
				c := *h
				again = &c
			}
		}
	}
	if stale {
		gs.Prune()
	}
	e.Chain = chainAfter(gs, e.Elem)
	if again != nil {
		e.Again = true
		reportRecursive(gs, l, again.Read, e.Read)
		return e
	}
	if chains.Contains(e.Chain) {
		return e
	}
	// A new chain: drop holds that ended in another goroutine's hands
	// before recording edges from them.
	if gs.Prune() {
		e.Chain = chainAfter(gs, e.Elem)
		if chains.Contains(e.Chain) {
			return e
		}
	}
	if gs.Len() > 0 {
		recordEdges(gs, e)
	}
	return e
}

// chainAfter returns the chain key of gs's held locks followed by elem.
func chainAfter(gs *held.G, elem uint64) chain.Key {
	var prev chain.Key
	if gs.Len() > 0 {
		prev = gs.Top().Chain
	}
	return chain.Extend(prev, elem)
}

// tryAcquired pushes a lock taken by a successful TryLock or TryRLock. It
// adds no edge into the lock (a try cannot block), but the lock is a
// predecessor of what is taken while it is held.
func tryAcquired(gs *held.G, l *class.Lock, read bool) {
	if !read && !l.Class.Written() {
		firstWrite(l.Class)
	}
	if gs.Find(l) >= 0 {
		gs.Prune() // a stale hold of l (handed off) must not come back to life
	}
	e := held.Entry{Lock: l, Read: read, Try: true, Elem: elemOf(l.ID, read, true)}
	e.Chain = chainAfter(gs, e.Elem)
	if read {
		e.Gen = l.ReadGen()
	} else {
		holds(gs, l)
	}
	gs.Push(e)
}

// popIfTop pops gs's newest entry if it is a valid write hold of l.
func popIfTop(gs *held.G, l *class.Lock) bool {
	if top := gs.Top(); top.Lock == l && !top.Read && l.Holder() == gs.ID() {
		gs.Pop()
		return true
	}
	return false
}

// popIfTopRead pops gs's newest entry if it is a valid read hold of l.
func popIfTopRead(gs *held.G, l *class.Lock) bool {
	if top := gs.Top(); top.Lock == l && top.Read && l.ReadGen() == top.Gen {
		gs.Pop()
		return true
	}
	return false
}

// releaseOwn pops l from the calling goroutine's stack. It reports false
// if the goroutine does not hold l: the release is on behalf of another
// goroutine, or a bad unlock.
func releaseOwn(w uint32, l *class.Lock, read bool) bool {
	gs := held.Mine()
	if gs == nil {
		return false
	}
	return gs.PopIf(l, read, w) || (gs.Tag() == w && releaseDeep(gs, l, read))
}

func releaseDeep(gs *held.G, l *class.Lock, read bool) bool {
	ents := gs.Entries()
	for i := len(ents) - 1; i >= 0; i-- {
		if h := &ents[i]; h.Lock == l && h.Read == read {
			valid := gs.Valid(h)
			gs.Remove(i)
			return valid
		}
	}
	return false
}

// heldBy reports whether gs holds l validly, for writing unless readOK.
func heldBy(gs *held.G, w uint32, l *class.Lock, readOK bool) bool {
	if gs == nil || gs.Tag() != w {
		return false
	}
	ents := gs.Entries()
	for i := len(ents) - 1; i >= 0; i-- {
		if h := &ents[i]; h.Lock == l && (readOK || !h.Read) && gs.Valid(h) {
			return true
		}
	}
	return false
}

// recordEdges adds an edge from every lock gs holds to e's lock and reports
// the cycles they close. It runs once per new lock chain.
func recordEdges(gs *held.G, e held.Entry) {
	st := stack.Capture()
	now := time.Now()
	var found []graph.Cycle
	eng.mu.Lock()
	ents := gs.Entries()
	for i := range ents {
		h := &ents[i]
		if h.Lock == e.Lock {
			continue
		}
		same := h.Lock.Class == e.Lock.Class
		from, to := node(h.Lock, same), node(e.Lock, same)
		if from == to {
			continue
		}
		o := graph.Observation{
			Gate:      gate(ents, h.Lock, e.Lock),
			FromRead:  h.Read,
			ToRead:    e.Read,
			Goroutine: gs.ID(),
			Stack:     uint32(st),
			Time:      now,
		}
		if _, _, c := eng.graph.Add(from, to, o, canBlock); c != nil {
			found = append(found, c)
		}
	}
	chains.Add(e.Chain)
	vs := make([]Violation, 0, len(found))
	for _, c := range found {
		vs = append(vs, cycleViolation(c, gs.ID(), st))
	}
	eng.mu.Unlock()
	for _, v := range vs {
		publish(v)
	}
}

// firstWrite marks c as having writers. Read acquisitions of c can block
// from now on, so read-only cycles through c that were harmless may now
// deadlock: look for them again.
func firstWrite(c *class.Class) {
	if !c.MarkWritten() {
		return
	}
	var vs []Violation
	eng.mu.Lock()
	if eng.graph.Cyclic() {
		for id, n := range eng.nodes {
			if n.cls != c {
				continue
			}
			for _, e := range eng.graph.In(id) {
				if c := eng.graph.Recheck(e, canBlock); c != nil {
					vs = append(vs, cycleViolation(c, e.First.Goroutine, stack.ID(e.First.Stack)))
				}
			}
		}
	}
	eng.mu.Unlock()
	for _, v := range vs {
		publish(v)
	}
}

// gate returns the ids of the locks held for writing other than a and b:
// the locks that serialize every goroutine taking this edge.
func gate(ents []held.Entry, a, b *class.Lock) []graph.NodeID {
	var g []graph.NodeID
	for i := range ents {
		if h := &ents[i]; !h.Read && h.Lock != a && h.Lock != b {
			g = append(g, graph.NodeID(h.Lock.ID))
		}
	}
	slices.Sort(g)
	return slices.Compact(g)
}

// canBlock reports whether the acquisition along e can block: a write
// acquisition always can; a read acquisition only if the lock has writers,
// since Go's RWMutex blocks new readers behind a waiting writer.
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
		eng.graph.Node(id, "")
		if (instance || !l.Class.Named) && l.Track() {
			// Drop the lock's nodes when it becomes unreachable, so that
			// programs creating many short-lived locks stay bounded.
			runtime.AddCleanup(l, forget, [2]graph.NodeID{graph.NodeID(l.ID), graph.NodeID(l.Class.ID)})
		}
	}
	return id
}

// forget removes a dead lock's nodes. Named classes are never removed.
func forget(ids [2]graph.NodeID) {
	eng.mu.Lock()
	defer eng.mu.Unlock()
	for _, id := range ids {
		if n, ok := eng.nodes[id]; ok && (graph.NodeID(n.cls.ID) != id || !n.cls.Named) {
			eng.graph.Remove(id)
			delete(eng.nodes, id)
		}
	}
	// Go maps keep their peak size: rebuild once most nodes are gone.
	if eng.peak >= 4096 && len(eng.nodes) <= eng.peak/4 {
		nodes := make(map[graph.NodeID]nodeInfo, len(eng.nodes))
		maps.Copy(nodes, eng.nodes)
		eng.nodes, eng.peak = nodes, len(nodes)
	}
}

// cycleViolation builds the report of c. Called with eng.mu held.
func cycleViolation(c graph.Cycle, gid int64, st stack.ID) Violation {
	v := Violation{
		Kind:      KindCycle,
		Time:      time.Now(),
		Goroutine: gid,
		Stack:     frames(st),
	}
	var names, key []string
	for _, e := range c {
		from, to := eng.nodes[e.From].ref(), eng.nodes[e.To].ref()
		v.Locks = append(v.Locks, from)
		names = append(names, from.Name)
		v.Cycle = append(v.Cycle, Edge{
			From: from.Name, To: to.Name,
			FromRead: !e.FromWrite, ToRead: !e.ToWrite,
			Goroutine: e.First.Goroutine,
			Stack:     frames(stack.ID(e.First.Stack)),
			Time:      e.First.Time,
		})
	}
	for _, id := range c.Key() {
		key = append(key, fmt.Sprint(uint64(id)))
	}
	v.Key = string(KindCycle) + ":" + strings.Join(key, ",")
	v.Message = fmt.Sprintf("cycle of %d locks: %s -> %s", len(c), strings.Join(names, " -> "), names[0])
	return v
}

func ref(l *class.Lock) LockRef {
	return LockRef{Name: l.Name(), Class: l.ClassName(), ID: l.ID}
}

func reportRecursive(gs *held.G, l *class.Lock, heldRead, read bool) {
	st := stack.Capture()
	kind, what := KindRecursiveLock, "locks"
	switch {
	case heldRead && read:
		kind, what = KindRecursiveRLock, "read-locks"
	case read:
		what = "read-locks"
	}
	how := "for writing"
	if heldRead {
		how = "for reading"
	}
	publish(Violation{
		Kind:      kind,
		Message:   fmt.Sprintf("goroutine %d %s %s, which it already holds %s", gs.ID(), what, l.Name(), how),
		Time:      time.Now(),
		Goroutine: gs.ID(),
		Stack:     frames(st),
		Locks:     []LockRef{ref(l)},
		Key:       fmt.Sprintf("%s:%d:%d", kind, l.Class.ID, st),
	})
}

func reportBadUnlock(gid int64, l *class.Lock, msg string) {
	st := stack.Capture()
	publish(Violation{
		Kind:      KindBadUnlock,
		Message:   fmt.Sprintf("%s %s", msg, l.Name()),
		Time:      time.Now(),
		Goroutine: gid,
		Stack:     frames(st),
		Locks:     []LockRef{ref(l)},
		Key:       fmt.Sprintf("%s:%d:%d", KindBadUnlock, l.Class.ID, st),
	})
}

func reportNotHeld(gid int64, l *class.Lock, read bool) {
	st := stack.Capture()
	what := "AssertHeld"
	if read {
		what = "AssertRHeld"
	}
	publish(Violation{
		Kind:      KindNotHeld,
		Message:   fmt.Sprintf("%s: goroutine %d does not hold %s", what, gid, l.Name()),
		Time:      time.Now(),
		Goroutine: gid,
		Stack:     frames(st),
		Locks:     []LockRef{ref(l)},
		Key:       fmt.Sprintf("%s:%d:%d", KindNotHeld, l.Class.ID, st),
	})
}

// resetEngine forgets the graph and the chain cache.
func resetEngine() {
	eng.mu.Lock()
	eng.graph.Reset()
	eng.nodes, eng.peak = nil, 0
	chains.Clear()
	eng.mu.Unlock()
}
