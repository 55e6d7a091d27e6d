//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Initialisation writes: a lock's first acquisition, a write made with
// nothing else held, does not count as a write of its class, unless
// another goroutine tries to acquire the lock while it is held.

// initDB is bbolt's DB in small: Open maps the file under y (the mmap
// lock) before the DB is shared; every later write of y holds g (the
// writer lock).
type initDB struct {
	g, x lockorder.Mutex
	y    lockorder.RWMutex
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
			quiet := openInitDB(lockY)
			gatedCycle(&quiet.g, &quiet.x, &quiet.y)
			require.Empty(t, lockorder.Violations(), "uncontended")
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
	fresh(t)
	db := openInitDB(lockY)
	gatedCycle(&db.g, &db.x, &db.y)
	require.Empty(t, lockorder.Violations())
	run(func() { db.y.Lock(); db.y.Unlock() })
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// Reads only after the initialisation write: y has no writers, and a read
// cycle through it is not reported, as for a lock never written.
func TestInitWriteThenReadsOnly(t *testing.T) {
	fresh(t)
	db := openInitDB(lockY)
	run(func() { db.y.RLock(); db.x.Lock(); db.x.Unlock(); db.y.RUnlock() })
	run(func() { db.x.Lock(); db.y.RLock(); db.y.RUnlock(); db.x.Unlock() })
	assert.Empty(t, lockorder.Violations())
}

// Reset forgets y's writes, not that y was used: after it, a write of y
// with nothing held is no initialisation, and counts.
func TestInitWriteResetKeepsUsed(t *testing.T) {
	fresh(t)
	db := openInitDB(lockY)
	gatedCycle(&db.g, &db.x, &db.y)
	require.Empty(t, lockorder.Violations())
	lockorder.Reset()
	run(func() { db.y.Lock(); db.y.Unlock() })
	gatedCycle(&db.g, &db.x, &db.y)
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// A first write under which another lock is taken is no initialisation:
// y's only write is its first, and the inversion through it (y, then x;
// x, then y for reading) is reported.
func TestInitWriteTakingAnotherLockCounts(t *testing.T) {
	fresh(t)
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
	fresh(t)
	var g, x lockorder.Mutex
	var y lockorder.RWMutex
	run(func() { y.Lock(); y.Unlock() }) // first, uncontended, nothing under it
	gatedCycle(&g, &x, &y)               // every later write under g
	assert.Empty(t, lockorder.Violations(), "the gate is g's, the first write overlooked")
}
