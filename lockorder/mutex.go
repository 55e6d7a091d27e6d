//go:build !syncwatch_off

package lockorder

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/ctxwait"
	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/kind"
	"github.com/syncwatch/syncwatch/internal/stack"
	"github.com/syncwatch/syncwatch/internal/syncword"
)

// A Mutex is a mutual exclusion lock that checks how it is used.
// It is a drop-in replacement for [sync.Mutex]: the zero value is an
// unlocked mutex, the methods have sync's names and meanings, and a Mutex
// may be unlocked by a goroutine other than the one that locked it.
//
// In ModeCheck every Lock is checked against the lock-order graph before it
// blocks; see the package documentation for what is reported and what it
// costs. A zero-value Mutex is its own lock class, named in reports after
// the code that first locks it ("store.(*DB).beginTx (db.go:801)#2");
// use [NewMutex], or [Mutex.SetClass] for a Mutex held by value, to put
// many mutexes in one class.
//
// A Mutex must not be copied after first use, nor after NewMutex returns
// it or SetClass names it: the copy would share its identity. In ModeCheck a goroutine taking
// such a copy and its original together is reported (copied-lock).
//
// Unlike sync's, a Mutex that has been used holds a pointer to its
// identity: two used Mutexes (and structs holding them) are not equal to
// reflect.DeepEqual, nor to testify's assert.Equal, where two sync.Mutexes
// unlocked are; and %+v prints the pointer. The same holds for RWMutex,
// Once, WaitGroup and Cond.
type Mutex struct {
	mu sync.Mutex
	l  atomic.Pointer[class.Lock]
}

// NewMutex returns an unlocked mutex in the lock class called class. All
// mutexes created with the same class name share ordering rules: if a
// goroutine takes store#1 then replica#1, and another later takes replica#2
// then store#2, that is a cycle.
func NewMutex(class string) *Mutex {
	m := new(Mutex)
	m.l.Store(newLock(class, kind.Mutex, unsafe.Pointer(m)))
	return m
}

// SetClass puts m, a zero-value Mutex, in the lock class called name, as
// NewMutex(name) would: a Mutex held by value in a struct is named without
// becoming a pointer, by a call in the struct's constructor.
//
//	func NewDB() *DB {
//		db := &DB{}
//		db.mu.SetClass("db")
//		return db
//	}
//
// It must be called before m is first used. SetClass panics if m already
// has an identity of another kind: it is in another class, or it has been
// used, which named it after the code that first locked it (in ModeOff and
// ModeTrace an uncontended Lock makes no identity, so a late SetClass may
// go unnoticed there). Calling it again with the same name does nothing.
func (m *Mutex) SetClass(name string) { setClass(&m.l, name, kind.Mutex, unsafe.Pointer(m)) }

// setClass gives the zero-value lock at addr, whose identity is at p, one
// in the class called name, unless it has one: see Mutex.SetClass.
func setClass(p *atomic.Pointer[class.Lock], name string, k kind.Kind, addr unsafe.Pointer) {
	l := p.Load()
	if l == nil {
		if p.CompareAndSwap(nil, newLock(name, k, addr)) {
			return
		}
		l = p.Load() // another goroutine used it, or named it, meanwhile
	}
	switch {
	case !l.Class.Named:
		panic(fmt.Sprintf("lockorder: SetClass(%q) on a %s already used, as %s: call SetClass before its first use", name, k, l.Name()))
	case l.Class.Name != name:
		panic(fmt.Sprintf("lockorder: SetClass(%q) on a %s already in class %q", name, k, l.Class.Name))
	}
}

func newLock(name string, k kind.Kind, p unsafe.Pointer) *class.Lock {
	enableRoles()
	l := keyed(class.NewNamed(name, k, uintptr(p)))
	return l
}

// CurrentMode returns the mode in force.
func CurrentMode() Mode { return loadMode() }

// lock returns m's identity, creating it on first use. It is small enough
// to inline.
func (m *Mutex) lock() *class.Lock {
	if l := m.l.Load(); l != nil {
		return l
	}
	return m.newLock()
}

// newLock is lock's rare half, kept out of line so that lock inlines.
//
//go:noinline
func (m *Mutex) newLock() *class.Lock { return initLock(&m.l, kind.Mutex, unsafe.Pointer(m)) }

// initLock gives a zero-value lock at addr its identity, once: the first
// of concurrent callers wins. The lock is named after the code that called
// into lockorder (see site.go).
func initLock(p *atomic.Pointer[class.Lock], k kind.Kind, addr unsafe.Pointer) *class.Lock {
	l := keyed(class.NewAt(callerSite(), k, uintptr(addr)))
	if p.CompareAndSwap(nil, l) {
		return l
	}
	return p.Load()
}

// firstLock is lock's rare half for a check-mode acquisition of m: see
// firstLockOf.
//
//go:noinline
func (m *Mutex) firstLock() (*class.Lock, stack.ID) {
	return firstLockOf(&m.l, kind.Mutex, unsafe.Pointer(m))
}

// firstLockOf is initLock for a check-mode acquisition, which records
// where its lock is first taken (noteFirst) and, under another lock, the
// stack of its new chain: one unwind names the lock and serves both. It
// returns the lock's identity and, if this call made it, that stack, for
// the caller's new chain; the zero ID if another goroutine made it first.
func firstLockOf(p *atomic.Pointer[class.Lock], k kind.Kind, addr unsafe.Pointer) (*class.Lock, stack.ID) {
	var t stack.Trace
	t.Take()
	l, won := nameFrom(&t, p, k, addr)
	if !won {
		return l, 0
	}
	st := t.ID()
	l.SetFirst(uint32(st))
	return l, st
}

// nameFrom names the primitive at addr, whose identity p holds, after
// the first frame of t that is not lockorder's, sync's or the runtime's
// (siteIn), and sets it in p unless another goroutine did first. It
// returns p's identity and whether it is the one made here.
func nameFrom(t *stack.Trace, p *atomic.Pointer[class.Lock], k kind.Kind, addr unsafe.Pointer) (*class.Lock, bool) {
	l := keyed(class.NewAt(siteIn(t.PCs()), k, uintptr(addr)))
	if !p.CompareAndSwap(nil, l) {
		return p.Load(), false
	}
	return l, true
}

// firstNested is initLock for the first use of a Once or a WaitGroup,
// whose identity p holds, at addr, by the goroutine gid in mode word w: if
// that goroutine holds locks in ModeCheck (the call is nested: its edges
// are a new chain, with a stack), one unwind names the primitive and
// serves as that stack, as firstLockOf's does for a Mutex. The stack
// starts drop frames above firstNested's caller. It returns the identity
// and that stack, the zero ID if another goroutine named the primitive
// first; nil if the call is not nested: the caller then names it with
// initLock itself (callerSite looks at the first few frames, which one
// more call would crowd).
func firstNested(p *atomic.Pointer[class.Lock], k kind.Kind, addr unsafe.Pointer, w uint32, gid int64, drop int) (*class.Lock, stack.ID) {
	if Mode(w&modeMask) != ModeCheck {
		return nil, 0
	}
	if gs := ownState(w, gid); gs == nil || gs.Len() == 0 {
		return nil, 0
	}
	var t stack.Trace
	t.Take()
	l, won := nameFrom(&t, p, k, addr)
	if !won {
		return l, 0
	}
	t.Drop(1 + drop) // firstNested's own frame, then the caller's
	return l, t.ID()
}

// firstStack is firstLockOf for a lock given its identity before it was
// ever taken (NewMutex, SetClass, SetClassIfNew: syncwatch test names
// every lock it rewrites so): if this acquisition may be l's first, it
// records the calling goroutine's stack as where l is first taken
// (noteFirst then has nothing to do) and returns it, for the new chain the
// acquisition makes if it is under another lock. One unwind serves both,
// as firstLockOf's does: a program that takes a new lock under another
// each time (a node of a cache made and locked under the cache's lock)
// unwinds once per lock, not twice. It returns the zero ID otherwise.
func firstStack(l *class.Lock) stack.ID {
	// Unused first: it is read on every nested acquisition, and l's
	// first is on the cache line its holder writes at each change of
	// hands, which a lock shared by goroutines would make every one miss.
	if !l.Unused() || l.First() != 0 {
		return 0
	}
	st := stack.Capture()
	l.SetFirst(uint32(st))
	return st
}

// chainStack returns st, the stack firstLockOf or firstStack took, or
// else the calling goroutine's, for a new chain (newChain). Inlined, it
// captures in its caller's frame.
func chainStack(st stack.ID) stack.ID {
	if st != 0 {
		return st
	}
	return stack.Capture()
}

// Lock locks m. If m is already locked, Lock blocks until it is available.
// In ModeCheck a lock-order cycle or a recursive Lock is reported before
// Lock blocks.
func (m *Mutex) Lock() {
	if atomic.LoadUint32(&fastOff) == 0 && atomic.CompareAndSwapInt32(syncword.State(&m.mu), 0, syncword.Locked) {
		return // the fast path, inlined: see fastpath.go
	}
	m.lockSlow()
}

// lockSlow is Lock past the inlined fast path: ModeCheck, or a lock that is
// not free.
func (m *Mutex) lockSlow() {
	// Every call on this path costs: it is written out so that the only
	// calls left are the goroutine-state lookup and sync's own.
	w := modeWord.Load()
	switch Mode(w & modeMask) {
	case ModeTrace:
		if !m.mu.TryLock() {
			traceWait(m.lock(), &m.mu)
		}
		return
	case ModeOff:
		m.mu.Lock()
		return
	}
	l := m.l.Load()
	var first stack.ID
	if l == nil {
		l, first = m.firstLock()
	}
	id := goid.ID()
	gs := gls.Mine(id)
	if gs == nil {
		gs = gls.Get(id)
	}
	gs.Retag(w)
	locked, init := false, false
	if gs.Len() == 0 && l.Class.Settled() {
		// Nothing held: no order edge and no recursion to check, and no
		// writers' gate to open, so m may be tried before it is recorded.
		// (Whether it is m's initialisation write changes nothing here,
		// but it is recorded: see use.)
		if !l.Plain() && !l.Quiet(gs.Seq()) {
			init = useSlow(gs, l, false)
		}
		locked = m.mu.TryLock()
		gs.PushHold(l, false, 0, l.Elem(false), chain.Key(l.Chain(false)))
		if init {
			gs.MarkInit()
		}
	} else {
		// The acquisition path (acquire.go).
		if first == 0 && w&profileBit == 0 && enterSeen(gs, l) {
			if !m.mu.TryLock() {
				acquisition{gs: gs, l: l, done: gs.ID()}.wait(&m.mu)
			}
			holdsAs(l, id)
			return
		}
		if first == 0 {
			first = firstStack(l)
		}
		a, fresh := acquiring(gs, l, w, false).begin(m)
		if fresh {
			newChain(gs, chainStack(first))
		}
		if !m.mu.TryLock() {
			a.wait(&m.mu)
		}
		a.acquired(skipFromSlowHalf)
		return
	}
	// The acquisition path's last steps, inlined but for the wait.
	if !locked {
		a := acquisition{gs: gs, l: l}
		if init {
			a.f = acqInit
		}
		a.wait(&m.mu)
	}
	holdsAs(l, id)
	if w&profileBit != 0 {
		noteHold(gs, l, skipFromSlowHalf)
	}
}

// TryLock tries to lock m and reports whether it succeeded. A successful
// TryLock adds no order edge into m (it cannot block), but m counts as held
// for what is locked after it.
func (m *Mutex) TryLock() bool {
	if !m.mu.TryLock() {
		tryFailed(&m.l)
		return false
	}
	if w := modeWord.Load(); Mode(w&modeMask) == ModeCheck {
		tried(w, m.lock(), false)
	}
	return true
}

// Unlock unlocks m. As with sync.Mutex, it is a run-time error if m is not
// locked on entry; in ModeCheck the bad unlock is reported, with its stack,
// before that error.
func (m *Mutex) Unlock() {
	if atomic.LoadUint32(&fastOff) == 0 && atomic.CompareAndSwapInt32(syncword.State(&m.mu), syncword.Locked, 0) {
		return
	}
	m.unlockSlow(false)
}

// unlockSlow is Unlock past the inlined fast path: ModeCheck, or a lock
// with waiters to wake. inWait is releaseDeep's: set for a Cond.Wait on
// m, which takes m again before it returns (the caller's section under m
// goes on, R23).
func (m *Mutex) unlockSlow(inWait bool) {
	if w := modeWord.Load(); w&modeMask == uint32(ModeCheck) {
		l := m.lock()
		// The common case, inline: the caller holds m and took it last.
		id := goid.ID()
		if gs := gls.Home(id); gs != nil && gs.Len() != 0 && gs.Tag() == w &&
			gs.Top().Note == 0 && popIfTop(gs, l, id) {
			gs.Rest()
		} else if ok, proved := releaseOwn(w, l, false, inWait); !ok {
			if shared := m.unlockOther(l); shared != nil {
				unlockSync(&m.mu)
				initShared(shared)
				return
			}
		} else if proved != nil {
			unlockSync(&m.mu) // rings a LockContext that may wait for m
			finishRelease(proved)
			return
		}
	}
	if ctxwait.Waiting() {
		unlockSync(&m.mu) // a LockContext may wait for m: see ctxwait.go
		return
	}
	m.mu.Unlock()
}

// unlockOther handles an Unlock by a goroutine that does not hold m. It
// returns m's identity if the release makes m's initialisation write
// count (see releasedInit), for the caller to count once m is unlocked.
func (m *Mutex) unlockOther(l *class.Lock) *class.Lock {
	if m.mu.TryLock() {
		unlockSync(&m.mu)
		reportBadUnlock(goid.ID(), l, unlockOfUnlocked)
		return nil
	}
	// Locked by another goroutine, released on its behalf: legal.
	shared := releasedInit(l)
	handedOff(l)
	releasedByOther(l)
	return shared
}

// LockContext locks m, waiting at most until ctx is done. If it gives up it
// returns a *[WaitError] that wraps ctx.Err() (so errors.Is(err,
// context.DeadlineExceeded) works), m is left as it was, and, when the
// deadline passed, a wait-timeout violation names the holder. Like
// x/sync's semaphore, it may succeed without blocking even if ctx is done;
// a LockContext whose ctx is done when it is called cannot wait, and in
// ModeCheck it is a TryLock: it takes m only if m is free, and adds no
// order edge into m.
//
// LockContext waits on the calling goroutine and starts none. Once it
// has returned an error, nothing holds or takes m on its behalf. Its wait
// is a channel receive, so inside a testing/synctest bubble it returns at
// the bubble's deadline; as with x/sync's semaphore, m must then be
// unlocked inside the bubble too. A LockContext waiting behind a steady
// stream of Lock callers is not starved: after a release it lost a race
// for, one of the next two hands m to it. While any LockContext waits for a
// Mutex, the Mutexes' uncontended Lock and Unlock take their slow path.
func (m *Mutex) LockContext(ctx context.Context) error {
	if ctx == nil {
		panic("lockorder: LockContext with nil Context")
	}
	w := modeWord.Load()
	if Mode(w&modeMask) != ModeCheck {
		if m.mu.TryLock() {
			return nil
		}
		return waitContext(ctx, nil, m.lock(), false, (*ctxMutex)(&m.mu))
	}
	if ctx.Err() != nil {
		return doneContext(ctx, m.lock(), m.TryLock)
	}
	a, fresh := acquiring(current(w), m.lock(), w, false).begin(m)
	if fresh {
		newChain(a.gs, stack.Capture())
	}
	if !m.mu.TryLock() {
		if err := a.waitContext(ctx, (*ctxMutex)(&m.mu)); err != nil {
			return err
		}
	}
	a.acquired(skipFromMethod)
	return nil
}

// AssertHeld reports a not-held violation, with the caller's stack, if the
// calling goroutine does not hold m. It checks only in ModeCheck; in the
// other modes it costs one atomic load.
func (m *Mutex) AssertHeld() {
	if w := modeWord.Load(); Mode(w&modeMask) == ModeCheck {
		if l := m.lock(); !heldBy(gls.Find(goid.ID()), w, l, false) {
			reportNotHeld(goid.ID(), l, false)
		}
	}
}

// HeldLocks returns the locks the calling goroutine holds, oldest first.
// Only ModeCheck tracks holders; in the other modes it returns nil. A
// function started by WaitGroup.Go holds no lock by being in its group.
// Coordination primitives use it to report a lock held across a wait.
func HeldLocks() []LockRef {
	w := modeWord.Load()
	if Mode(w&modeMask) != ModeCheck {
		return nil
	}
	gs := gls.Find(goid.ID())
	if gs == nil || gs.Tag() != w {
		return nil
	}
	var out []LockRef
	ents := gs.Entries()
	for i := range ents {
		// A goroutine started by WaitGroup.Go holds a place in its group,
		// which is no lock it could release.
		if gs.Valid(&ents[i]) && !ents[i].Lock.Kind.Counts() {
			out = append(out, ref(ents[i].Lock))
		}
	}
	return out
}
