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
	// -test.timeout as go test passes it: the monitor looks on while a
	// test alarm is armed (RULES.md W5).
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1", "-test.timeout=10m")
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
// of y outside g. The goroutine that opened the DB, or goroutines it
// starts after, take the cycle: none was there before the write but the
// writer, so nothing shows y shared when it was written.
func TestInitWriteIsNoWrite(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	for name, w := range map[string]func(*lockorder.RWMutex){"Lock": lockY, "TryLock": tryLockY, "LockContext": lockYContext} {
		for by, in := range map[string]func(func()){"goroutines started after": run, "the writer": inline} {
			t.Run(name+", cycle by "+by, func(t *testing.T) {
				fresh(t)
				db := openInitDB(w)
				gatedCycleIn(in, &db.g, &db.x, &db.y)
				assert.Empty(t, lockorder.Violations())
				assert.True(t, lockorder.InitDone(&db.y), "the write does not count")
			})
		}
	}
}

// With the held profile on, an initialisation write's hold is listed as
// any other while it lasts, its release drops it, and ends the write.
func TestInitWriteWithHeldProfile(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	lockorder.Configure(lockorder.WithHeldProfile(true)) // no change of mode
	t.Cleanup(func() { lockorder.Configure(lockorder.WithHeldProfile(false)) })
	require.True(t, lockorder.InitRule())
	var y lockorder.RWMutex
	takeAndKeep(&y)
	require.True(t, lockorder.InitHeld(&y))
	assert.Equal(t, int64(1), holds(t, "takeAndKeep"))
	y.Unlock()
	assert.Zero(t, holds(t, "takeAndKeep"))
	assert.True(t, lockorder.InitDone(&y))
}

// inline runs f in the calling goroutine.
func inline(f func()) { f() }

// A worker is a goroutine that runs the functions it is given, one at a
// time, and waits for more.
type worker chan func()

// startWorker starts a worker, there before what the test does next. If
// seen, it takes a lockorder lock first, so that it has lockorder state
// (held.G): lockorder knows it was there.
func startWorker(t *testing.T, seen bool) worker {
	w, exited := make(worker), make(chan struct{})
	go func() {
		defer close(exited)
		if seen {
			var own lockorder.Mutex
			own.Lock()
			own.Unlock()
		}
		for f := range w {
			f()
		}
	}()
	w.run(func() {}) // started, and its lock taken
	t.Cleanup(func() { close(w); <-exited })
	return w
}

// run runs f in the worker and waits for it.
func (w worker) run(f func()) {
	done := make(chan struct{})
	w <- func() { defer close(done); f() }
	<-done
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
// wins uncontended and takes nothing under it, and whose readers all come
// after that write, has that write go uncounted. The gate learnt here is
// g's; in another interleaving the first write could have queued behind
// the cycle's read hold of y, and a reader under x queued behind it: a
// deadlock no gate excludes.
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
// initialisation, each on fresh locks: y's first write, with nothing
// held, then a read cycle through y, whose steps in runs. Each returns y.
var firstWrites = map[string]func(in func(func())) *lockorder.RWMutex{
	// A lazily filled cache: y written first, by a goroutine of its own,
	// then read in both orders around x.
	"cache": func(in func(func())) *lockorder.RWMutex {
		var x lockorder.Mutex
		var y lockorder.RWMutex
		run(func() { y.Lock(); y.Unlock() })
		readOrdersIn(in, &x, &y)
		return &y
	},
	// bbolt's Open, by the calling goroutine, then the read cycle gated by
	// the writer lock.
	"Open": func(in func(func())) *lockorder.RWMutex {
		db := openInitDB(lockY)
		gatedCycleIn(in, &db.g, &db.x, &db.y)
		return &db.y
	},
}

// Readers that were running before y's first write (they had taken a
// lockorder lock) show y shared when it was written: the write counts, as
// one made with nothing held, and the cycles through y are reported, as
// without the rule. A goroutine started before the write that takes its
// first lockorder lock after it passes for a later one (the rule's
// approximation of "there": its lockorder state): no evidence.
func TestInitWriteReadersRunningBeforeCount(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	for name, shape := range firstWrites {
		fresh(t)
		shape(startWorker(t, true).run)
		assert.Len(t, only(lockorder.KindCycle), 1, "%s, read by a goroutine there before the write", name)

		fresh(t)
		shape(startWorker(t, false).run)
		assert.Empty(t, only(lockorder.KindCycle), "%s, read by a goroutine that first locks after the write", name)
	}
}

// The evidence may come at any time after the write: the cycle held back
// is reported as soon as a goroutine that was there at the write acquires
// y, tries to, or releases a hold of y that another goroutine took. The
// writer, and goroutines started after the write, are no evidence.
func TestInitWriteCountsWhenAnEarlierGoroutineComes(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	// Each shows y shared from w; the calling goroutine, y's writer,
	// takes the holds w releases (under g: writes that keep the gate).
	for name, evidence := range map[string]func(w worker, db *initDB){
		"RLock":    func(w worker, db *initDB) { w.run(func() { db.y.RLock(); db.y.RUnlock() }) },
		"TryRLock": func(w worker, db *initDB) { w.run(func() { require.True(t, db.y.TryRLock()); db.y.RUnlock() }) },
		"TryLock":  func(w worker, db *initDB) { w.run(func() { require.True(t, db.y.TryLock()); db.y.Unlock() }) },
		"Lock under g": func(w worker, db *initDB) {
			w.run(func() { db.g.Lock(); db.y.Lock(); db.y.Unlock(); db.g.Unlock() })
		},
		"failed TryLock": func(w worker, db *initDB) {
			db.g.Lock()
			db.y.Lock()
			w.run(func() { assert.False(t, db.y.TryLock()) })
			db.y.Unlock()
			db.g.Unlock()
		},
		"RUnlock of another's hold": func(w worker, db *initDB) {
			db.y.RLock()
			w.run(db.y.RUnlock)
		},
		"Unlock of another's write": func(w worker, db *initDB) {
			db.g.Lock()
			db.y.Lock()
			w.run(db.y.Unlock)
			db.g.Unlock()
		},
	} {
		t.Run(name, func(t *testing.T) {
			fresh(t)
			w := startWorker(t, true)
			db := openHeldBack(t)
			db.y.RLock() // the writer
			db.y.RUnlock()
			run(func() { db.y.RLock(); db.y.RUnlock() }) // a later goroutine
			require.Empty(t, lockorder.Violations(), "no evidence yet")
			require.True(t, lockorder.InitDone(&db.y))
			evidence(w, db)
			assert.Len(t, only(lockorder.KindCycle), 1, "reported when the evidence comes")
			assert.False(t, lockorder.InitDone(&db.y))
		})
	}
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
			shape(run)
			assert.Empty(t, only(lockorder.KindCycle), "%s, in check mode since init", name)
		}
		lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
		lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
	}
	require.False(t, lockorder.InitRule())
	for name, shape := range firstWrites {
		fresh(t)
		shape(run)
		assert.Len(t, only(lockorder.KindCycle), 1, "%s, after a switch into check mode", name)
	}
}
