package registry_test

import (
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

func TestLiveListsOnlyReachableObjects(t *testing.T) {
	const kind = "test-live"
	keep := &thing{n: 1}
	registry.Add(kind, keep)
	registry.Add(kind, &thing{n: 2}) // garbage at once
	runtime.GC()
	live := registry.Live[thing](kind)
	require.Len(t, live, 1)
	assert.Same(t, keep, live[0])
	assert.Empty(t, registry.Live[thing]("test-none"))
	runtime.KeepAlive(keep)
}

func TestTheListStaysBoundedAsObjectsComeAndGo(t *testing.T) {
	const kind = "test-churn"
	before := registry.Dropped(kind)
	keep := &thing{n: 0}
	registry.Add(kind, keep)
	for i := range 20 * registry.MaxPerKind {
		registry.Add(kind, &thing{n: i})
		if i%(registry.MaxPerKind/4) == 0 {
			runtime.GC()
		}
	}
	runtime.GC()
	assert.Equal(t, before, registry.Dropped(kind), "collected objects make room")
	live := registry.Live[thing](kind)
	assert.Contains(t, live, keep)
	runtime.KeepAlive(keep)
}

func TestPastTheBoundObjectsAreCountedNotKept(t *testing.T) {
	const kind = "test-bound"
	before := registry.Dropped(kind)
	keep := make([]*thing, registry.MaxPerKind+3)
	for i := range keep {
		keep[i] = &thing{n: i}
		registry.Add(kind, keep[i])
	}
	assert.Len(t, registry.Live[thing](kind), registry.MaxPerKind)
	assert.Equal(t, 3, registry.Dropped(kind)-before)
	runtime.KeepAlive(keep)
}
