package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

// The captured -m output of the syncwatch_off build: lockorder's wrappers
// are inlined everywhere and nothing else differs.
func TestCompareDiagnosticsCaptured(t *testing.T) {
	s := CompareDiagnostics(readTestdata(t, "gcflags-m-syncimpl.txt"), readTestdata(t, "gcflags-m-lockorderimpl.txt"))
	assert.Empty(t, s.OnlySync)
	assert.Empty(t, s.OnlyLockorder)
	assert.Equal(t, 30, s.Inlined)
	assert.True(t, s.Same())
}

func TestCompareDiagnosticsDiffers(t *testing.T) {
	syncOut := strings.Join([]string{
		"# github.com/syncwatch/syncwatch/bench/internal/impls/syncimpl",
		"bench/internal/impls/syncimpl/workloads.go:21:10: inlining call to sync.(*Mutex).Lock",
		"bench/internal/impls/syncimpl/workloads.go:22:12: inlining call to sync.(*Mutex).Unlock",
		"bench/internal/impls/syncimpl/workloads.go:156:12: new(sync.Mutex) escapes to heap",
	}, "\n")
	// A build where lockorder's Unlock is no longer inlined, and so neither
	// is sync's.
	loOut := strings.Join([]string{
		"bench/internal/impls/lockorderimpl/workloads.go:21:10: inlining call to lockorder.(*Mutex).Lock",
		"bench/internal/impls/lockorderimpl/workloads.go:21:10: inlining call to sync.(*Mutex).Lock",
		"bench/internal/impls/lockorderimpl/workloads.go:21:10: inlining call to sync.(*Mutex).Lock",
		"bench/internal/impls/lockorderimpl/workloads.go:156:12: new(lockorder.Mutex) escapes to heap",
		"lockorder/mutex_off.go:25:6: can inline (*Mutex).Lock",
	}, "\n")
	s := CompareDiagnostics(syncOut, loOut)
	assert.Equal(t, 1, s.Inlined)
	assert.Equal(t, []string{"22:12: inlining call to sync.(*Mutex).Unlock"}, s.OnlySync)
	assert.Empty(t, s.OnlyLockorder)
	assert.False(t, s.Same())

	// Nothing inlined is not "the same code", even with no differences.
	assert.False(t, CompareDiagnostics("", "").Same())
}
