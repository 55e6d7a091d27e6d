package rwlock_test

import (
	"math/rand/v2"
	"slices"
)

// The model of sync.RWMutex, step by step: writers queue on the writers'
// mutex in order; the one at its head announces itself, holding readers
// out, and is let in when the readers in have left; its Unlock lets in the
// readers that queued behind it before the next writer announces itself.
// A cancellable wait given up leaves the lock as though it had never been
// made.
type model struct {
	state   []actorState
	last    []op // each actor's last operation
	readers int  // readers in
	writer  int  // the writer announced (pending or in), or -1
	pending bool // writer waits for the readers in
	wq      []int
	rq      []int
}

type actorState int

const (
	idle actorState = iota
	holdsRead
	holdsWrite
	blocked
)

type completion struct {
	actor int
	ok    bool
}

func newModel(n int) *model {
	return &model{state: make([]actorState, n), last: make([]op, n), writer: -1}
}

// choose picks a random actor and an operation it can be given.
func (m *model) choose(r *rand.Rand, cancellable bool) (int, op, bool) {
	for range 20 {
		a := r.IntN(len(m.state))
		switch m.state[a] {
		case idle:
			ops := []op{opLock, opRLock, opRLock, opTryLock, opTryRLock}
			if cancellable {
				ops = append(ops, opLockCtx, opLockCtx, opRLockCtx)
			}
			return a, ops[r.IntN(len(ops))], true
		case holdsRead:
			return a, opRUnlock, true
		case holdsWrite:
			return a, opUnlock, true
		case blocked:
			if m.last[a] == opLockCtx || m.last[a] == opRLockCtx {
				return a, opCancel, true
			}
		}
	}
	return 0, 0, false
}

// release picks a step towards a free lock: a cancel, else an unlock.
func (m *model) release() (int, op, bool) {
	for a, s := range m.state {
		if s == blocked && (m.last[a] == opLockCtx || m.last[a] == opRLockCtx) {
			return a, opCancel, true
		}
	}
	for a, s := range m.state {
		switch s {
		case holdsRead:
			return a, opRUnlock, true
		case holdsWrite:
			return a, opUnlock, true
		}
	}
	return 0, 0, false
}

// apply makes a do o and returns the operations that complete.
func (m *model) apply(a int, o op) []completion {
	var done []completion
	in := func(b int, st actorState) {
		m.state[b] = st
		done = append(done, completion{b, true})
	}
	if o != opCancel {
		m.last[a] = o
	}
	switch o {
	case opLock, opLockCtx:
		if m.writer < 0 {
			m.announce(a, in)
		} else {
			m.state[a] = blocked
			m.wq = append(m.wq, a)
		}
	case opRLock, opRLockCtx:
		if m.writer < 0 {
			m.readers++
			in(a, holdsRead)
		} else {
			m.state[a] = blocked
			m.rq = append(m.rq, a)
		}
	case opTryLock:
		if m.writer < 0 && m.readers == 0 {
			m.writer = a
			in(a, holdsWrite)
		} else {
			done = append(done, completion{a, false})
		}
	case opTryRLock:
		if m.writer < 0 {
			m.readers++
			in(a, holdsRead)
		} else {
			done = append(done, completion{a, false})
		}
	case opRUnlock:
		m.readers--
		in(a, idle)
		if m.pending && m.readers == 0 {
			m.pending = false
			in(m.writer, holdsWrite)
		}
	case opUnlock:
		in(a, idle)
		m.withdraw(in)
	case opCancel:
		m.state[a] = idle
		done = append(done, completion{a, false})
		switch {
		case m.writer == a:
			m.withdraw(in)
		case slices.Contains(m.wq, a):
			m.wq = slices.DeleteFunc(m.wq, func(b int) bool { return b == a })
		default:
			m.rq = slices.DeleteFunc(m.rq, func(b int) bool { return b == a })
		}
	}
	return done
}

// announce makes a the writer: in at once if no reader is, else pending.
func (m *model) announce(a int, in func(int, actorState)) {
	m.writer = a
	if m.readers == 0 {
		in(a, holdsWrite)
		return
	}
	m.state[a] = blocked
	m.pending = true
}

// withdraw ends the writer's announcement: the readers queued behind it
// are let in, then the next writer announces itself.
func (m *model) withdraw(in func(int, actorState)) {
	for _, b := range m.rq {
		m.readers++
		in(b, holdsRead)
	}
	m.rq = m.rq[:0]
	m.writer, m.pending = -1, false
	if len(m.wq) > 0 {
		b := m.wq[0]
		m.wq = m.wq[1:]
		m.announce(b, in)
	}
}
