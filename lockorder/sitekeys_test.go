//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// here returns the line it is called on.
func here() int {
	_, _, line, _ := runtime.Caller(1)
	return line
}

func heldName(t *testing.T) string {
	t.Helper()
	h := lockorder.HeldLocks()
	require.NotEmpty(t, h)
	return h[len(h)-1].Name
}

func wantSite(t *testing.T, name, fn string, line int) {
	t.Helper()
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(fmt.Sprintf("%s (sitekeys_test.go:%d)", fn, line)) + `#\d+$`)
	assert.Regexp(t, re, name)
}

func lockGeneric[L sync.Locker](l L) int {
	l.Lock()
	return here() - 1
}

func lockViaLocker(l sync.Locker) int {
	l.Lock()
	return here() - 1
}

// Every first use names the lock after the code that made the call.
func TestSiteOfEachEntryPoint(t *testing.T) {
	fresh(t)
	const fn = "lockorder_test.TestSiteOfEachEntryPoint"
	ctx := context.Background()
	{
		var m lockorder.Mutex
		line := here() + 1
		m.Lock()
		wantSite(t, heldName(t), fn, line)
		m.Unlock()
	}
	{
		var m lockorder.Mutex
		line := here() + 1
		require.True(t, m.TryLock())
		wantSite(t, heldName(t), fn, line)
		m.Unlock()
	}
	{
		var m lockorder.Mutex
		line := here() + 1
		require.NoError(t, m.LockContext(ctx))
		wantSite(t, heldName(t), fn, line)
		m.Unlock()
	}
	{
		var m lockorder.RWMutex
		line := here() + 1
		m.RLock()
		wantSite(t, heldName(t), fn, line)
		m.RUnlock()
	}
	{
		var m lockorder.RWMutex
		line := here() + 1
		require.True(t, m.TryRLock())
		wantSite(t, heldName(t), fn, line)
		m.RUnlock()
	}
	{
		var m lockorder.RWMutex
		line := here() + 1
		require.NoError(t, m.RLockContext(ctx))
		wantSite(t, heldName(t), fn, line)
		m.RUnlock()
	}
	{
		var m lockorder.RWMutex
		line := here() + 1
		require.NoError(t, m.LockContext(ctx))
		wantSite(t, heldName(t), fn, line)
		m.Unlock()
	}
	{
		var m lockorder.Mutex
		f := m.Lock // a method value
		line := here() + 1
		f()
		wantSite(t, heldName(t), fn, line)
		m.Unlock()
	}
	{
		var m lockorder.Mutex
		line := lockGeneric(&m)
		wantSite(t, heldName(t), "lockorder_test.lockGeneric[...]", line)
		m.Unlock()
	}
	{
		var m lockorder.Mutex
		line := lockViaLocker(&m)
		wantSite(t, heldName(t), "lockorder_test.lockViaLocker", line)
		m.Unlock()
	}
}

// withLock is the kind of helper many code bases have.
func withLock(m *lockorder.Mutex, f func()) {
	m.Lock()
	defer m.Unlock()
	f()
}

type reviewAccount struct{ mu lockorder.Mutex }
type reviewCache struct{ mu lockorder.Mutex }

func reviewTransfer(from, to *reviewAccount) {
	withLock(&from.mu, func() { withLock(&to.mu, func() {}) })
}

func reviewRefresh(a, b *reviewCache) {
	withLock(&a.mu, func() { withLock(&b.mu, func() {}) })
}

// Two different bugs, in different types and functions: accounts locked in
// both orders by reviewTransfer, and caches locked in both orders by
// reviewRefresh. Each is a cycle of its own, with its own stacks; the
// second must reach the handler and the records.
func TestDistinctCyclesThroughAHelperAreTwoReports(t *testing.T) {
	fresh(t)
	var handled []lockorder.Violation
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) { handled = append(handled, v) }))
	a1, a2 := &reviewAccount{}, &reviewAccount{}
	reviewTransfer(a1, a2)
	reviewTransfer(a2, a1)
	require.Len(t, only(lockorder.KindCycle), 1)

	c1, c2 := &reviewCache{}, &reviewCache{}
	reviewRefresh(c1, c2)
	reviewRefresh(c2, c1)
	vs := only(lockorder.KindCycle)
	for _, v := range vs {
		t.Logf("%s (instances %d)", v.Message, v.Instances)
	}
	require.Len(t, vs, 2, "the caches' cycle, a different bug, was folded into the accounts' report")
	assert.NotEqual(t, vs[0].Message, vs[1].Message, "two bugs, two names: the helper's callers tell them apart")
	assert.Regexp(t, `^cycle of 2 locks: lockorder_test\.withLock \(sitekeys_test\.go:\d+\) from \S*reviewTransfer\S* \(sitekeys_test\.go:\d+\) -> `, vs[0].Message)
	assert.Len(t, handled, 2, "the handler never heard of the caches' cycle")
}

// A named class: a same-class instance inversion in one function, then in
// another, unrelated one. Before the change each was a report (keyed by
// instance nodes); now the second is an "instance" of the first.
func TestSameClassInversionsInTwoPlaces(t *testing.T) {
	fresh(t)
	s1, s2 := lockorder.NewMutex("shard"), lockorder.NewMutex("shard")
	run(func() { lockAB(s1, s2) })
	run(func() { lockAB(s2, s1) })
	s3, s4 := lockorder.NewMutex("shard"), lockorder.NewMutex("shard")
	run(func() { s3.Lock(); s4.Lock(); s4.Unlock(); s3.Unlock() })
	run(func() { s4.Lock(); s3.Lock(); s3.Unlock(); s4.Unlock() })
	vs := only(lockorder.KindCycle)
	for _, v := range vs {
		t.Logf("%s (instances %d)", v.Message, v.Instances)
	}
	assert.Len(t, vs, 2)
}

// Concurrent SetClass and Lock, and concurrent first Locks at many sites.
func TestRaceSetClassAndLock(t *testing.T) {
	fresh(t)
	for range 200 {
		var m lockorder.Mutex
		var wg sync.WaitGroup
		wg.Add(3)
		go func() {
			defer wg.Done()
			defer func() { _ = recover() }()
			m.SetClass("race-class")
		}()
		go func() { defer wg.Done(); m.Lock(); m.Unlock() }()
		go func() { defer wg.Done(); m.Lock(); m.Unlock() }()
		wg.Wait()
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 2000 {
				var a, b lockorder.Mutex
				a.Lock()
				b.Lock()
				b.Unlock()
				a.Unlock()
				_ = nameOf(t, &a)
			}
		})
	}
	wg.Wait()
}

type reviewEmbed struct{ lockorder.Mutex }
type reviewEmbedRW struct{ lockorder.RWMutex }

func TestSiteThroughPromotedWrapper(t *testing.T) {
	fresh(t)
	const fn = "lockorder_test.TestSiteThroughPromotedWrapper"
	{
		var s reviewEmbed
		var l sync.Locker = &s
		line := here() + 1
		l.Lock()
		wantSite(t, heldName(t), fn, line)
		l.Unlock()
	}
	{
		var s reviewEmbedRW
		l := s.RLocker()
		line := here() + 1
		l.Lock()
		wantSite(t, heldName(t), fn, line)
		l.Unlock()
	}
	{
		var m lockorder.Mutex
		c := sync.NewCond(&m)
		lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
		m.Lock()
		lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
		go func() { m.Lock(); c.Signal(); m.Unlock() }()
		c.Wait()
		t.Logf("sync.Cond first-use name: %s", heldName(t))
		m.Unlock()
	}
}

// A site names its function without the import path, but for a major
// version, and with escaped dots restored.
func TestShortFunc(t *testing.T) {
	for fn, want := range map[string]string{
		"example.com/store.(*DB).beginTx":          "store.(*DB).beginTx",
		"go.etcd.io/bbolt/v2.(*DB).View":           "bbolt/v2.(*DB).View",
		"gopkg.in/yaml%2ev3.(*decoder).unmarshal":  "yaml.v3.(*decoder).unmarshal",
		"main.main.func1":                          "main.main.func1",
		"example.com/m.Get[...]":                   "m.Get[...]",
		"example.com/m.Map[go.shape.string].Store": "m.Map[go.shape.string].Store",
		"example.com/vv/v.F":                       "v.F",
	} {
		assert.Equal(t, want, lockorder.ShortFunc(fn), fn)
	}
}
