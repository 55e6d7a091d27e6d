package bench_test

import (
	"sync"
	"testing"

	"github.com/syncwatch/syncwatch/internal/goid"
)

// BenchmarkBookkeepingFloor measures a model, not lockorder: the least a
// checker can do around a sync.Mutex and still know which goroutine holds
// which lock. Each Lock reads the goroutine id, finds the goroutine's state
// in a table with one load, tries the lock and pushes a one-word entry;
// each Unlock does the same lookup, pops the entry and unlocks. There is
// no mode, no chain key, no recursion or holder check, and no way to grow.
//
// It bounds what case (a) in check mode can cost on a machine:
// bench/README.md compares it with sync.Mutex (impl=sync)
// and with a target that would need a checker to beat it. Run it with
// go test -run '^$' -bench 'Uncontended/impl=sync|BookkeepingFloor' ./bench.
func BenchmarkBookkeepingFloor(b *testing.B) {
	b.ReportAllocs()
	var (
		mu    sync.Mutex
		lock  floorLock
		table floorTable
		g     floorG
	)
	id := goid.ID()
	g.stack = g.inline[:0]
	table[id&int64(len(table)-1)] = floorSlot{id: id, g: &g}
	for b.Loop() {
		floorLockOf(&table, &mu, &lock)
		floorUnlockOf(&table, &mu, &lock)
	}
	if len(g.stack) != 0 {
		b.Fatalf("%d entries left on the held stack", len(g.stack))
	}
}

type floorLock struct{ _ int }

type floorTable [64]floorSlot

// of returns goroutine id's state, nil if it has none: one slot load, as
// lockorder's held table costs when the slot is the goroutine's.
func (t *floorTable) of(id int64) *floorG {
	if s := &t[id&int64(len(t)-1)]; s.id == id {
		return s.g
	}
	return nil
}

type floorSlot struct {
	id int64
	g  *floorG
}

type floorG struct {
	stack  []*floorLock
	inline [8]*floorLock
}

// floorLockOf and floorUnlockOf are out of line, as lockorder's checked
// halves are: neither fits the inliner's budget.
//
//go:noinline
func floorLockOf(t *floorTable, mu *sync.Mutex, l *floorLock) {
	g := t.of(goid.ID())
	if !mu.TryLock() {
		mu.Lock()
	}
	g.stack = append(g.stack, l)
}

//go:noinline
func floorUnlockOf(t *floorTable, mu *sync.Mutex, l *floorLock) {
	g := t.of(goid.ID())
	if n := len(g.stack) - 1; n >= 0 && g.stack[n] == l {
		g.stack[n] = nil
		g.stack = g.stack[:n]
	}
	mu.Unlock()
}
