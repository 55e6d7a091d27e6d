//go:build !syncwatch_off

package lockorder_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/syncword"
	"github.com/syncwatch/syncwatch/lockorder"
)

// The fast paths are on exactly in ModeOff and ModeTrace, and only where
// sync's layout checked out (never under the race detector).
func TestFastPathsFollowTheMode(t *testing.T) {
	t.Cleanup(func() { lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck)) })
	for _, m := range []lockorder.Mode{lockorder.ModeOff, lockorder.ModeTrace, lockorder.ModeCheck, lockorder.ModeTrace} {
		lockorder.Configure(lockorder.WithMode(m))
		want := m != lockorder.ModeCheck && syncword.Verify()
		require.Equal(t, want, lockorder.FastPaths(), "mode %v", m)
	}
}

// Outside the race detector the fast paths are on in ModeTrace. A Go
// release that moves sync's state word, or one whose layout has not been
// checked yet, turns them off; that must fail here, not make every Lock
// quietly slower.
func TestFastPathsOnWithoutRace(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector compiles the fast paths out")
	}
	require.True(t, lockorder.LayoutOK(), "sync's layout did not check out on %s (see internal/syncword)", runtime.Version())
	t.Cleanup(func() { lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck)) })
	lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
	require.True(t, lockorder.FastPaths())
}

// Each mode, fast paths included, excludes: goroutines hammering one Mutex
// and one RWMutex, with locks taken and released across mode changes, keep
// the guarded counters exact.
func TestMutualExclusionAcrossModes(t *testing.T) {
	t.Cleanup(func() { lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck)) })
	const goroutines, rounds = 4, 5000
	var (
		mu   lockorder.Mutex
		rw   lockorder.RWMutex
		n    int
		a, b int
		bad  int
		wg   sync.WaitGroup
		stop = make(chan struct{})
	)
	go func() { // switch modes under the workers' feet
		modes := []lockorder.Mode{lockorder.ModeOff, lockorder.ModeTrace, lockorder.ModeCheck}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
				lockorder.Configure(lockorder.WithMode(modes[i%len(modes)]))
				runtime.Gosched()
			}
		}
	}()
	for range goroutines {
		wg.Go(func() {
			for i := range rounds {
				mu.Lock()
				n++
				mu.Unlock()
				if i%4 == 0 {
					rw.Lock()
					a++
					b++
					rw.Unlock()
					continue
				}
				rw.RLock()
				if a != b {
					mu.Lock()
					bad++
					mu.Unlock()
				}
				rw.RUnlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	require.Equal(t, goroutines*rounds, n)
	require.Equal(t, goroutines*rounds/4, a)
	require.Equal(t, a, b)
	require.Zero(t, bad, "a reader saw a writer's half-done update")
}

// The fast paths are worth having only inlined into the caller: this fails
// if a change to Lock or Unlock (or a compiler release) pushes them over
// the inliner's budget. The same goes for the lock-identity lookups every
// ModeCheck call makes: a call each way was a tenth of its cost.
func TestFastPathsInline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(gobin, "build", "-gcflags=-m", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, m := range []string{`\(\*Mutex\)\.Lock`, `\(\*Mutex\)\.Unlock`, `\(\*Mutex\)\.lock`, `\(\*RWMutex\)\.lock`,
		`\(\*RWMutex\)\.RLock`, `\(\*RWMutex\)\.RUnlock`} {
		require.Regexp(t, regexp.MustCompile(`(?m)^\S+: can inline `+m+`$`), string(out), "%s is not inlinable any more", m)
	}
}
