//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Initialisation writes: a lock's first acquisition, a write made with
// nothing else held, does not count as a write of its class, unless
// another goroutine tries to acquire the lock while it is held. The rule
// holds only in a process in check mode since lockorder's init: each test
// of it starts with freshInitRule.

// initRuleChild marks a child process started by initRuleHere.
const initRuleChild = "LOCKORDER_INIT_RULE_CHILD"

// freshInitRule starts a test as fresh does, in a process where the
// initialisation-write rule applies: this one if it has never left check
// mode, and it reports true for the calling test, a top-level one, to go
// on. If not (an earlier test switched modes), it runs the test alone in
// a child process, in check mode from the start, and reports false: the
// child's result is the test's.
func freshInitRule(t *testing.T) bool {
	t.Helper()
	if lockorder.InitRule() {
		fresh(t)
		return true
	}
	require.Empty(t, os.Getenv(initRuleChild), "the child process is not in check mode since init")
	runTestInChild(t, "SYNCWATCH_MODE=check", initRuleChild+"=1")
	return false
}

// runTestInChild runs the calling test, a top-level one, alone in a child
// process with env added to this one's environment, and fails if it does
// not pass there.
func runTestInChild(t *testing.T, env ...string) {
	t.Helper()
	require.NotContains(t, t.Name(), "/", "a top-level test")
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.True(t, strings.Contains(string(out), "--- PASS: "+t.Name()+" ("), "%s", out)
}

// initDB is bbolt's DB in small: Open maps the file under y (the mmap
// lock) before the DB is shared; every later write of y holds g (the
// writer lock).
type initDB struct {
	g, x lockorder.Mutex
	y    lockorder.RWMutex
}

// openHeldBack opens a DB whose first write of y is by Lock, and runs the
// gated cycle, which is held back.
func openHeldBack(t *testing.T) *initDB {
	t.Helper()
	db := openInitDB(lockY)
	gatedCycle(&db.g, &db.x, &db.y)
	require.Empty(t, lockorder.Violations(), "held back")
	return db
}

// openInitDB writes y with nothing held, first, as initWrite does it.
func openInitDB(initWrite func(*lockorder.RWMutex)) *initDB {
	db := new(initDB)
	initWrite(&db.y)
	db.y.Unlock()
	return db
}

func lockY(y *lockorder.RWMutex)    { y.Lock() }
func tryLockY(y *lockorder.RWMutex) { _ = y.TryLock() }
func lockYContext(y *lockorder.RWMutex) {
	if err := y.LockContext(context.Background()); err != nil {
		panic(err)
	}
}

// The bbolt Open pattern: the read cycle gated by g is not reported, the
// initialisation write (by Lock, TryLock or LockContext) being no writer
// of y outside g.
func TestInitWriteIsNoWrite(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	for name, w := range map[string]func(*lockorder.RWMutex){"Lock": lockY, "TryLock": tryLockY, "LockContext": lockYContext} {
		t.Run(name, func(t *testing.T) {
			fresh(t)
			db := openInitDB(w)
			gatedCycle(&db.g, &db.x, &db.y)
			assert.Empty(t, lockorder.Violations())
		})
	}
}

// A goroutine that tries to take y while the initialisation write holds
// it proves y shared: the write counts, as a write with nothing held, and
// the cycle is reported. The same DB left uncontended is not.
func TestInitWriteContendedCounts(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	waits := func(take, release func(*initDB)) func(*initDB) {
		return func(db *initDB) {
			y := &db.y
			done := make(chan struct{})
			go func() {
				defer close(done)
				take(db)
				release(db)
			}()
			// Until the other goroutine has come (its wait made the write
			// count).
			for end := time.Now().Add(2 * time.Second); lockorder.InitHeld(y) && time.Now().Before(end); {
				runtime.Gosched()
			}
			y.Unlock()
			<-done
		}
	}
	for name, contend := range map[string]func(*initDB){
		"RLock waits": waits(func(db *initDB) { db.y.RLock() }, func(db *initDB) { db.y.RUnlock() }),
		// A write under g, which alone would keep the gate.
		"Lock waits": waits(func(db *initDB) { db.g.Lock(); db.y.Lock() }, func(db *initDB) { db.y.Unlock(); db.g.Unlock() }),
		"TryLock fails": func(db *initDB) {
			run(func() { assert.False(t, db.y.TryLock()) })
			assert.False(t, lockorder.InitHeld(&db.y))
			db.y.Unlock()
		},
	} {
		t.Run(name, func(t *testing.T) {
			fresh(t)
			openHeldBack(t) // uncontended
			db := new(initDB)
			db.y.Lock()
			contend(db)
			gatedCycle(&db.g, &db.x, &db.y)
			assert.Len(t, only(lockorder.KindCycle), 1)
		})
	}
}

// Only the first write is exempt: a second one with nothing held, after
// the initialisation, opens the gate, and the cycle held back is reported.
func TestInitWriteOnlyTheFirst(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	db := openHeldBack(t)
	run(func() { db.y.Lock(); db.y.Unlock() })
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// Reads only after the initialisation write: y has no writers, and a read
// cycle through it is not reported, as for a lock never written.
func TestInitWriteThenReadsOnly(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	db := openInitDB(lockY)
	readOrders(&db.x, &db.y)
	assert.Empty(t, lockorder.Violations())
}

// Reset forgets y's writes, not that y was used: after it, a write of y
// with nothing held is no initialisation, and counts.
func TestInitWriteResetKeepsUsed(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	db := openHeldBack(t)
	lockorder.Reset()
	run(func() { db.y.Lock(); db.y.Unlock() })
	gatedCycle(&db.g, &db.x, &db.y)
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// A first write under which another lock is taken is no initialisation:
// y's only write is its first, and the inversion through it (y, then x;
// x, then y for reading) is reported.
func TestInitWriteTakingAnotherLockCounts(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	var x lockorder.Mutex
	var y lockorder.RWMutex
	run(func() { y.Lock(); x.Lock(); x.Unlock(); y.Unlock() })
	run(func() { x.Lock(); y.RLock(); y.RUnlock(); x.Unlock() })
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// The limit: a lock shared before its first write, whose first write
// wins uncontended and takes nothing under it, has that write go
// uncounted. The gate learnt here is g's; in another interleaving the
// first write could have queued behind the cycle's read hold of y, and a
// reader under x queued behind it: a deadlock no gate excludes.
func TestInitWriteLimit(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	var g, x lockorder.Mutex
	var y lockorder.RWMutex
	run(func() { y.Lock(); y.Unlock() }) // first, uncontended, nothing under it
	gatedCycle(&g, &x, &y)               // every later write under g
	assert.Empty(t, lockorder.Violations(), "the gate is g's, the first write overlooked")
}

// firstWrites are the shapes whose first write the rule takes for an
// initialisation, each run on fresh locks: it returns the cycles reported.
var firstWrites = map[string]func() []lockorder.Violation{
	// A lazily filled cache: y written first with nothing held, then read
	// in both orders around x.
	"cache": func() []lockorder.Violation {
		var x lockorder.Mutex
		var y lockorder.RWMutex
		run(func() { y.Lock(); y.Unlock() })
		readOrders(&x, &y)
		return only(lockorder.KindCycle)
	},
	// bbolt's Open, then the read cycle gated by the writer lock.
	"Open": func() []lockorder.Violation {
		db := openInitDB(lockY)
		gatedCycle(&db.g, &db.x, &db.y)
		return only(lockorder.KindCycle)
	},
}

// switchChild names the child processes of the test below.
const switchChild = "LOCKORDER_SWITCH_CHILD"

// After a switch into check mode at run time, a lock's first write seen
// may come long after the lock was shared, its readers unseen in the mode
// before: it counts as an ordinary write, and the cycles through it are
// reported. So too once the process has left check mode, even if it came
// back: the rule holds only while every acquisition has been seen. Each
// case runs in a child process, started in trace or in check mode.
func TestFirstWriteAfterASwitchIntoCheckCounts(t *testing.T) {
	switch os.Getenv(switchChild) {
	case "":
		runTestInChild(t, "SYNCWATCH_MODE=trace", switchChild+"=trace")
		runTestInChild(t, "SYNCWATCH_MODE=check", switchChild+"=check")
		return
	case "check":
		require.True(t, lockorder.InitRule())
		for name, shape := range firstWrites {
			fresh(t)
			assert.Empty(t, shape(), "%s, in check mode since init", name)
		}
		lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
		lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
	}
	require.False(t, lockorder.InitRule())
	for name, shape := range firstWrites {
		fresh(t)
		assert.Len(t, shape(), 1, "%s, after a switch into check mode", name)
	}
}
