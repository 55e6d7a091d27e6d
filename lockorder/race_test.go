//go:build !syncwatch_off

package lockorder_test

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Under the race detector an RWMutex orders what sync.RWMutex orders and
// nothing more, in every mode: races between readers are still reported.
// Each scenario runs in a child process (runChild), which the detector
// makes fail.

// raceScenario runs two readers of rw in mode, one after the other, that
// both write x: a race sync.RWMutex does not hide.
func raceScenario(mode lockorder.Mode) {
	lockorder.Configure(lockorder.WithMode(mode))
	rw := lockorder.NewRWMutex("race")
	x := 0
	var wg sync.WaitGroup
	wg.Go(func() { rw.RLock(); x++; rw.RUnlock() })
	// Later in time, not ordered: synchronising the two (a channel) would
	// hide the very race the detector must see.
	wg.Go(func() { time.Sleep(50 * time.Millisecond); rw.RLock(); x++; rw.RUnlock() })
	wg.Wait()
}

func TestRaceDetectorSeesRacesBetweenReaders(t *testing.T) {
	if !raceEnabled {
		t.Skip("needs -race")
	}
	for _, mode := range []string{"off", "trace", "check"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"=race-"+mode)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the child must fail: %s", out)
			assert.True(t, strings.Contains(string(out), "WARNING: DATA RACE"), "%s", out)
		})
	}
}
