//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// pool has two zero-value locks that two of its methods take in opposite
// orders: one inversion between two fields of one struct.
type pool struct{ free, busy lockorder.Mutex }

func (p *pool) acquire() {
	p.free.Lock()
	p.busy.Lock()
	p.busy.Unlock()
	p.free.Unlock()
}

func (p *pool) release() {
	p.busy.Lock()
	p.free.Lock()
	p.free.Unlock()
	p.busy.Unlock()
}

// stats locks busy alone: on the pools it reaches first, busy is named
// after it.
func (p *pool) stats() {
	p.busy.Lock()
	p.busy.Unlock()
}

// Which function locked an instance first names it, and differs between
// the pools below; the inversion in the code is the same, so it is one
// report, counting both pools.
func TestOneInversionWhateverLockedFirst(t *testing.T) {
	fresh(t)
	p1 := &pool{}
	run(p1.acquire) // free and busy named after acquire
	run(p1.release)
	p2 := &pool{}
	run(p2.stats) // busy named after stats
	run(p2.release)
	run(p2.acquire)
	p3 := &pool{}
	run(p3.release) // both named after release
	run(p3.acquire)
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "one inversion in the code, reported per name of its locks")
	assert.Equal(t, 3, vs[0].Instances, "each pool is an instance of the one report")
}

// The same inversion reached from two tests is one report; the second
// test's pools are instances of it.
func TestOneInversionFromTwoTests(t *testing.T) {
	fresh(t)
	t.Run("first", func(t *testing.T) {
		p := &pool{}
		run(p.acquire)
		run(p.release)
	})
	t.Run("second", func(t *testing.T) {
		p := &pool{}
		p.release()
		p.acquire()
	})
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.Equal(t, 2, vs[0].Instances)
}

// transferPair locks two instances of one field in the order given: both
// edges of its cycle take their lock at one line, so its callers tell
// cycles apart, but a test calling it is only a test.
func transferPair(from, to *pool) {
	from.free.Lock()
	to.free.Lock()
	to.free.Unlock()
	from.free.Unlock()
}

func TestOneArgumentOrderInversionFromTwoTests(t *testing.T) {
	fresh(t)
	t.Run("first", func(t *testing.T) {
		a, b := &pool{}, &pool{}
		transferPair(a, b)
		transferPair(b, a)
	})
	t.Run("second", func(t *testing.T) {
		a, b := &pool{}, &pool{}
		transferPair(a, b)
		transferPair(b, a)
	})
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.Equal(t, 2, vs[0].Instances)
}

// The tests an occurrence came from are counted: one finding reached from
// two tests is one report, which says so.
func TestReportCountsTests(t *testing.T) {
	fresh(t)
	from := func(test string) lockorder.Violation {
		return lockorder.Violation{
			Kind: "invariant", Source: "test", Message: "m", Key: "one-finding", Instances: 1,
			Stack: lockorder.Stack{
				{Function: "example.com/store.(*DB).put", File: "db.go", Line: 10},
				{Function: "example.com/store." + test + ".func1", File: "db_test.go", Line: 20},
			},
		}
	}
	lockorder.Report(from("TestPut"))
	lockorder.Report(from("TestPut"))
	lockorder.Report(from("TestBatch"))
	var got []lockorder.Violation
	for _, v := range lockorder.Violations() {
		if v.Key == "one-finding" {
			got = append(got, v)
		}
	}
	require.Len(t, got, 1)
	assert.Equal(t, 3, got[0].Instances)
	assert.Equal(t, 2, got[0].Tests)
	assert.Equal(t, []string{"TestPut", "TestBatch"}, got[0].TestNames())
	assert.Contains(t, got[0].String(), "seen on 3 instances in 2 tests")
}
