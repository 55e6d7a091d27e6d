package rwlock_test

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/rwlock"
)

// Under the race detector the lock must order what sync.RWMutex orders
// and nothing more: a race between two readers, or between code before
// one reader's RLock and code after another's, is still a race. Each
// scenario runs in a child process, which the detector makes fail.

const raceChildEnv = "RWLOCK_RACE_CHILD"

var raceScenarios = map[string]func(){
	// Two read sections that write shared data, one after the other.
	"readers": func() {
		var rw rwlock.RWMutex
		x := 0
		var wg sync.WaitGroup
		wg.Go(func() { rw.RLock(); x++; rw.RUnlock() })
		wg.Go(func() { time.Sleep(50 * time.Millisecond); rw.RLock(); x++; rw.RUnlock() })
		wg.Wait()
	},
	// A write before one reader's RLock, a read after another's.
	"unlocked": func() {
		var rw rwlock.RWMutex
		x := 0
		var wg sync.WaitGroup
		wg.Go(func() { x = 1; rw.RLock(); rw.RUnlock() })
		wg.Go(func() { time.Sleep(50 * time.Millisecond); rw.RLock(); rw.RUnlock(); _ = x })
		wg.Wait()
	},
}

func TestRaceChild(t *testing.T) {
	name := os.Getenv(raceChildEnv)
	if name == "" {
		t.Skip("run by TestRaceDetectorSeesRacesBetweenReaders")
	}
	raceScenarios[name]()
}

func TestRaceDetectorSeesRacesBetweenReaders(t *testing.T) {
	if !rwlock.RaceEnabled {
		t.Skip("needs -race")
	}
	for name := range raceScenarios {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestRaceChild$")
			cmd.Env = append(os.Environ(), raceChildEnv+"="+name)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the child must fail: %s", out)
			assert.True(t, strings.Contains(string(out), "WARNING: DATA RACE"), "%s", out)
		})
	}
}
