package measure_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/bench/internal/measure"
)

var keep []byte

func TestLiveHeapSeesRetainedMemory(t *testing.T) {
	before := measure.LiveHeap()
	keep = make([]byte, 8<<20)
	during := measure.LiveHeap()
	keep = nil
	after := measure.LiveHeap()
	// 8 MiB are retained; allow 1 MiB for whatever else the runtime frees
	// meanwhile (the test once missed an exact bound by 16 bytes).
	assert.GreaterOrEqual(t, during, before+7<<20)
	assert.Less(t, after, during-4<<20)
}

func TestAtDepth(t *testing.T) {
	depth := func() int { return runtime.Callers(0, make([]uintptr, 256)) }
	var base, deep int
	measure.AtDepth(1, func() { base = depth() })
	measure.AtDepth(41, func() { deep = depth() })
	assert.Equal(t, 40, deep-base)
}
