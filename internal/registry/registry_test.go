package registry_test

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/registry"
)

// thing is big enough not to share a tiny-allocator block with another
// (which would keep it reachable as long as its neighbour).
type thing struct {
	n int
	_ [32]byte
}

// self is a view that is the object itself.
func self(p *thing) *thing { return p }

func TestViewsListOnlyReachableObjects(t *testing.T) {
	const kind registry.Kind[*thing] = "test-live"
	keep := &thing{n: 1}
	registry.Add(kind, keep, self)
	registry.Add(kind, &thing{n: 2}, self) // garbage at once
	runtime.GC()
	live := registry.Views(kind, math.MaxInt)
	require.Len(t, live, 1)
	assert.Same(t, keep, live[0])
	assert.Nil(t, registry.Views(registry.Kind[*thing]("test-none"), math.MaxInt))
	runtime.KeepAlive(keep)
}

func TestViewsAreTheFirstNOldestFirst(t *testing.T) {
	const kind registry.Kind[int] = "test-first"
	keep := make([]*thing, 5)
	for i := range keep {
		keep[i] = &thing{n: i}
		registry.Add(kind, keep[i], func(p *thing) int { return p.n })
	}
	assert.Equal(t, []int{0, 1, 2}, registry.Views(kind, 3))
	runtime.KeepAlive(keep)
}

func TestAViewMayUseTheRegistry(t *testing.T) {
	// A view runs with no lock of the registry held: one that reads the
	// registry itself (or takes a lock a registering goroutine holds)
	// does not deadlock.
	const kind registry.Kind[int] = "test-reentrant"
	keep := &thing{n: 7}
	registry.Add(kind, keep, func(p *thing) int { return p.n + registry.Dropped(kind) })
	assert.Equal(t, []int{7}, registry.Views(kind, 1))
	runtime.KeepAlive(keep)
}

func TestTheListStaysBoundedAsObjectsComeAndGo(t *testing.T) {
	const kind registry.Kind[*thing] = "test-churn"
	before := registry.Dropped(kind)
	keep := &thing{n: 0}
	registry.Add(kind, keep, self)
	for i := range 20 * registry.MaxPerKind {
		registry.Add(kind, &thing{n: i}, self)
		if i%(registry.MaxPerKind/4) == 0 {
			runtime.GC()
		}
	}
	runtime.GC()
	assert.Equal(t, before, registry.Dropped(kind), "collected objects make room")
	live := registry.Views(kind, math.MaxInt)
	assert.Contains(t, live, keep)
	runtime.KeepAlive(keep)
}

func TestPastTheBoundObjectsAreCountedNotKept(t *testing.T) {
	const kind registry.Kind[*thing] = "test-bound"
	before := registry.Dropped(kind)
	keep := make([]*thing, registry.MaxPerKind+3)
	for i := range keep {
		keep[i] = &thing{n: i}
		registry.Add(kind, keep[i], self)
	}
	assert.Len(t, registry.Views(kind, math.MaxInt), registry.MaxPerKind)
	assert.Equal(t, 3, registry.Dropped(kind)-before)
	runtime.KeepAlive(keep)
}
