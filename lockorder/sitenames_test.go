//go:build !syncwatch_off

package lockorder_test

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// The README's quick start, as a user writes it: zero-value mutexes in a
// struct, locked in both orders.

type Account struct {
	mu      lockorder.Mutex // was sync.Mutex
	balance int
}

func Transfer(from, to *Account, n int) {
	from.mu.Lock()
	defer from.mu.Unlock()
	to.mu.Lock()
	defer to.mu.Unlock()
	from.balance -= n
	to.balance += n
}

// lineOf returns the line of this file that contains code, which must be
// on one line only.
func lineOf(t *testing.T, code string) int {
	t.Helper()
	src, err := os.ReadFile("sitenames_test.go")
	require.NoError(t, err)
	line := 0
	for i, l := range strings.Split(string(src), "\n") {
		if strings.TrimSpace(l) == code {
			require.Zero(t, line, "%q is on two lines", code)
			line = i + 1
		}
	}
	require.NotZero(t, line, "%q not found", code)
	return line
}

// transferSites returns the names of the places in Transfer that lock the
// source and the destination account.
func transferSites(t *testing.T) (from, to string) {
	return fmt.Sprintf("lockorder_test.Transfer (sitenames_test.go:%d)", lineOf(t, "from.mu.Lock()")),
		fmt.Sprintf("lockorder_test.Transfer (sitenames_test.go:%d)", lineOf(t, "to.mu.Lock()"))
}

// instanceOf matches the name of an instance of the lock class site.
func instanceOf(site string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(site) + `#\d+$`)
}

func TestQuickStartCycleNamesTheCode(t *testing.T) {
	fresh(t)
	alice, bob := &Account{balance: 10}, &Account{balance: 10}
	Transfer(alice, bob, 1) // locks alice, then bob
	Transfer(bob, alice, 1) // bob, then alice: never at once, nothing hangs

	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	v := vs[0]
	from, to := transferSites(t)
	assert.NotContains(t, v.String(), "Mutex@", "a zero-value lock is named by its code, not its address")
	// alice was first locked as the source, bob as the destination.
	require.Len(t, v.Locks, 2)
	byClass := map[string]lockorder.LockRef{}
	for _, l := range v.Locks {
		byClass[l.Class] = l
		assert.Equal(t, "lockorder_test.Transfer", l.Func)
	}
	require.Contains(t, byClass, from)
	require.Contains(t, byClass, to)
	assert.Regexp(t, instanceOf(from), byClass[from].Name)
	assert.Regexp(t, instanceOf(to), byClass[to].Name)
	// The message names them by the code that took them in the cycle:
	// both are an Account's mu, taken at one line in both orders, so they
	// have one name, whichever function first locked each account.
	assert.Equal(t, "cycle of 2 locks: "+to+" -> "+to+" -> "+to, v.Message)
	for _, e := range v.Cycle {
		assert.Contains(t, []string{byClass[from].Name, byClass[to].Name}, e.From)
	}
	assert.Equal(t, 1, v.Instances)
	assert.NotContains(t, v.String(), "instances")
}

func TestSameCycleOnManyInstancesIsOneReport(t *testing.T) {
	fresh(t)
	var handled []lockorder.Violation
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) { handled = append(handled, v) }))
	for range 4 {
		alice, bob := &Account{}, &Account{}
		Transfer(alice, bob, 1)
		Transfer(bob, alice, 1)
		Transfer(bob, alice, 1) // nothing new: no more instances
	}

	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "one cycle in the code, one report")
	assert.Equal(t, 4, vs[0].Instances)
	assert.Contains(t, vs[0].String(), "seen on 4 instances")
	require.Len(t, handled, 1, "the handler sees the first instance only")
	assert.Equal(t, 1, handled[0].Instances)
	assert.Equal(t, vs[0].Message, handled[0].Message)

	// Another cycle, in other code, is a report of its own.
	a, b := lockorder.NewMutex("other-a"), lockorder.NewMutex("other-b")
	run(func() { lockAB(a, b) })
	run(func() { lockAB(b, a) })
	assert.Len(t, only(lockorder.KindCycle), 2)
}

// A DB holds its locks by value and names them in its constructor.
type DB struct {
	mu, log lockorder.Mutex
}

func NewDB() *DB {
	db := &DB{}
	db.mu.SetClass("db.mu")
	db.log.SetClass("db.log")
	return db
}

func TestSetClassGroupsValueFields(t *testing.T) {
	fresh(t)
	db1, db2 := NewDB(), NewDB()
	run(func() { lockAB(&db1.mu, &db1.log) })
	assert.Empty(t, only(lockorder.KindCycle))
	run(func() { lockAB(&db2.log, &db2.mu) }) // no instance inverted, the classes are

	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "the two DBs' fields are one class each")
	assert.Equal(t, "db.log", vs[0].Cycle[0].From)
	assert.Equal(t, "db.mu", vs[0].Cycle[0].To)
	assert.Regexp(t, `^db\.mu#\d+$`, nameOf(t, &db1.mu))
	assert.Equal(t, "db.mu", heldClass(t, &db2.mu))
}

func heldClass(t *testing.T, m *lockorder.Mutex) string {
	t.Helper()
	m.Lock()
	defer m.Unlock()
	held := lockorder.HeldLocks()
	require.Len(t, held, 1)
	return held[0].Class
}

func TestSetClassAgainOrAfterUse(t *testing.T) {
	fresh(t)
	var m lockorder.Mutex
	m.SetClass("again")
	m.SetClass("again") // the same name: nothing to do
	assert.PanicsWithValue(t, `lockorder: SetClass("other") on a Mutex already in class "again"`, func() { m.SetClass("other") })

	var used lockorder.Mutex
	used.Lock()
	used.Unlock()
	assert.Panics(t, func() { used.SetClass("late") })
	func() {
		defer func() {
			msg := fmt.Sprint(recover())
			assert.True(t, strings.HasPrefix(msg, `lockorder: SetClass("late") on a Mutex already used, as lockorder_test.TestSetClassAgainOrAfterUse (sitenames_test.go:`), msg)
		}()
		used.SetClass("late")
	}()

	var rw lockorder.RWMutex
	rw.SetClass("rw-class")
	rw.RLock()
	rw.RUnlock()
	rw.SetClass("rw-class")
	assert.PanicsWithValue(t, `lockorder: SetClass("x") on a RWMutex already in class "rw-class"`, func() { rw.SetClass("x") })
}

func TestWriteDOTNamesZeroValueLocksByCode(t *testing.T) {
	fresh(t)
	alice, bob := &Account{}, &Account{}
	Transfer(alice, bob, 1)
	Transfer(bob, alice, 1)
	var buf bytes.Buffer
	require.NoError(t, lockorder.WriteDOT(&buf))
	dot := buf.String()
	from, to := transferSites(t)
	assert.NotContains(t, dot, "Mutex@")
	for _, site := range []string{from, to} {
		assert.Regexp(t, `"`+regexp.QuoteMeta(site)+`#\d+" -> "lockorder_test\.Transfer \(sitenames_test\.go:\d+\)#\d+" \[.*color=red`, dot)
	}
}

func TestWaitProfileNamesZeroValueLocksByCode(t *testing.T) {
	freshWaitProfile(t, time.Hour)
	var m lockorder.Mutex
	contend(t, &m) // first locked in contend
	name := nameOf(t, &m)
	assert.Regexp(t, `^lockorder_test\.contend \(contend_test\.go:\d+\)#\d+$`, name)

	ss := samplesOf(waitProfile(t), name)
	require.Len(t, ss, 1)
	assert.Equal(t, []string{strings.TrimRight(name, "#0123456789")}, ss[0].Label["class"])
	assert.Equal(t, []string{"lockorder.wait(" + name + ")"}, functions(ss[0]))
}

type counter struct {
	mu lockorder.RWMutex
	n  int
}

// get read-locks c twice, as a helper calling a helper would.
func (c *counter) get() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	c.mu.RLock() // the same goroutine again: deadlocks if a writer queues in between
	defer c.mu.RUnlock()
	return c.n
}

// The same recursive read lock in many objects is one report, counting
// the objects; another place in the code is another report.
func TestSameMisuseOnManyInstancesIsOneReport(t *testing.T) {
	fresh(t)
	for range 3 {
		(&counter{}).get()
	}
	vs := only(lockorder.KindRecursiveRLock)
	require.Len(t, vs, 1)
	assert.Equal(t, 3, vs[0].Instances)
	assert.Contains(t, vs[0].String(), "seen on 3 instances")
	assert.Contains(t, vs[0].Locks[0].Name, "lockorder_test.(*counter).get (sitenames_test.go:")

	var other lockorder.RWMutex
	other.RLock()
	other.RLock()
	other.RUnlock()
	other.RUnlock()
	assert.Len(t, only(lockorder.KindRecursiveRLock), 2)
}
