//go:build !syncwatch_off

package lockorder_test

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime/pprof"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

func TestParseMode(t *testing.T) {
	for s, want := range map[string]lockorder.Mode{"off": lockorder.ModeOff, "trace": lockorder.ModeTrace, "check": lockorder.ModeCheck} {
		got, err := lockorder.ParseMode(s)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		assert.Equal(t, s, got.String())
	}
	_, err := lockorder.ParseMode("on")
	assert.ErrorContains(t, err, `SYNCWATCH_MODE="on": want off, trace or check`)
	assert.Equal(t, "Mode(7)", lockorder.Mode(7).String())
	assert.PanicsWithValue(t, "lockorder: unknown Mode 7", func() { lockorder.WithMode(7) })
}

func TestDefaultModeUnderTestIsCheckAndEnvOverrides(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		return
	}
	for env, want := range map[string]string{"": "check", "trace": "trace", "off": "off", "bogus": "check"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPrintMode$", "-test.v")
		cmd.Env = append(os.Environ(), "SYNCWATCH_MODE="+env, "LOCKORDER_PRINT_MODE=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), "mode="+want+"\n", "SYNCWATCH_MODE=%q", env)
		if env == "bogus" {
			assert.Contains(t, string(out), `lockorder: SYNCWATCH_MODE="bogus": want off, trace or check; ignoring it`)
			assert.NotContains(t, string(out), "lockorder: ignoring lockorder:", "one prefix")
		}
	}
}

// TestPrintMode prints the mode chosen at start-up, for the test above.
func TestPrintMode(t *testing.T) {
	if os.Getenv("LOCKORDER_PRINT_MODE") == "" {
		t.Skip("helper for TestDefaultModeUnderTestIsCheckAndEnvOverrides")
	}
	// TestMain forces ModeCheck; report what init chose before that.
	t.Logf("see stdout")
	os.Stdout.WriteString("mode=" + initialMode + "\n")
}

// heldProfileChild names the mode a child of the test below expects.
const heldProfileChild = "LOCKORDER_HELD_PROFILE_CHILD"

// SYNCWATCH_HELD_PROFILE=1 turns the held profile on at start-up, in
// either mode the environment chooses: init sets them together.
func TestHeldProfileEnvTurnsItOnAtStart(t *testing.T) {
	if want := os.Getenv(heldProfileChild); want != "" {
		assert.Equal(t, want, initialMode)
		var m lockorder.Mutex
		m.Lock()
		n := pprof.Lookup(lockorder.HeldProfileName).Count()
		m.Unlock()
		assert.Equal(t, 1, n, "the held profile lists m while it is held")
		return
	}
	for _, mode := range []string{"trace", "check"} {
		runTestInChild(t, "SYNCWATCH_MODE="+mode, "SYNCWATCH_HELD_PROFILE=1", heldProfileChild+"="+mode)
	}
}

func TestModeOffAndTraceKeepNoGraph(t *testing.T) {
	for _, m := range []lockorder.Mode{lockorder.ModeOff, lockorder.ModeTrace} {
		t.Run(m.String(), func(t *testing.T) {
			fresh(t)
			lockorder.Configure(lockorder.WithMode(m))
			defer lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
			assert.Equal(t, m, lockorder.CurrentMode())
			a, b := lockorder.NewMutex("offA"), lockorder.NewMutex("offB")
			run(func() { lockAB(a, b) })
			run(func() { lockAB(b, a) })
			assert.Empty(t, lockorder.Violations())
			nodes, _ := lockorder.GraphSize()
			assert.Zero(t, nodes)
			lockorder.Report(lockorder.Violation{Kind: "custom", Message: "x"})
			if m == lockorder.ModeOff {
				assert.Empty(t, lockorder.Violations(), "ModeOff reports nothing")
			} else {
				assert.Len(t, lockorder.Violations(), 1)
			}
		})
	}
}

func TestModeSwitchWithLocksHeld(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("swA"), lockorder.NewMutex("swB")
	run(func() {
		a.Lock() // check mode: recorded
		lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
		a.Unlock() // trace mode: not popped
		lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
		b.Lock() // must not see a as held
		a.Lock() // nor report a as recursive
		a.Unlock()
		b.Unlock()
	})
	run(func() { lockAB(b, a) }) // a stale a->b edge would close a cycle here
	assert.Empty(t, lockorder.Violations())
	_, edges := lockorder.GraphSize()
	assert.Equal(t, 1, edges, "only b->a")
}

func TestConcurrentUseAndConfigure(t *testing.T) {
	fresh(t)
	ms := make([]*lockorder.RWMutex, 6)
	for i := range ms {
		ms[i] = lockorder.NewRWMutex("conc" + string(rune('A'+i)))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 500 {
				// Always ascending: no cycle may be reported.
				i := r.IntN(len(ms) - 1)
				j := i + 1 + r.IntN(len(ms)-i-1)
				read := r.IntN(2) == 0
				if read {
					ms[i].RLock()
				} else {
					ms[i].Lock()
				}
				ms[j].Lock()
				ms[j].AssertHeld()
				ms[j].Unlock()
				ms[i].AssertRHeld()
				if read {
					ms[i].RUnlock()
				} else {
					ms[i].Unlock()
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 200 {
			lockorder.Configure(lockorder.WithWaitThreshold(0), lockorder.WithMode(lockorder.ModeCheck))
			_ = lockorder.Violations()
			if i%50 == 0 {
				lockorder.Reset()
			}
		}
	})
	wg.Wait()
	for _, v := range lockorder.Violations() {
		t.Errorf("unexpected violation: %v", v)
	}
}
