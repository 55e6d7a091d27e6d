package bank_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	bank "github.com/syncwatch/syncwatch/examples/testing"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// TestMain fails the package's run if any test leaves a violation that no
// VerifyNone has already reported: the deliberate one below is reported
// (to the recorder), so it does not count again.
func TestMain(m *testing.M) {
	lockordertest.VerifyTestMain(m)
}

// recorder is a lockordertest.TestingT that keeps the failures instead of
// failing the test.
type recorder struct{ errs []string }

func (r *recorder) Error(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }

// TestVerifyNoneCatchesTheInversion runs two transfers in opposite
// directions, one after the other. Nothing deadlocks and every balance is
// right, but VerifyNone reports the inversion.
//
// In a real test the last lines would simply be
//
//	func TestTransfers(t *testing.T) {
//		defer lockordertest.VerifyNone(t)
//		...
//	}
//
// and go test would fail with (paths and the last frames trimmed):
//
//	--- FAIL: TestTransfers (0.00s)
//	    bank_test.go:17: lockordertest: found 1 violation(s):
//
//	        lockorder: lock-order-cycle: cycle of 2 locks: account#2 -> account#1 -> account#2
//
//	        [1] goroutine 8 took account#1 while holding account#2, at:
//	            github.com/syncwatch/syncwatch/examples/testing.Transfer
//	                .../examples/testing/bank.go:56
//	            github.com/syncwatch/syncwatch/examples/testing_test.TestTransfers
//	                .../examples/testing/bank_test.go:16
//
//	        [2] goroutine 8 took account#2 while holding account#1, at:
//	            github.com/syncwatch/syncwatch/examples/testing.Transfer
//	                .../examples/testing/bank.go:56
//	            github.com/syncwatch/syncwatch/examples/testing_test.TestTransfers
//	                .../examples/testing/bank_test.go:15
//
//	        Possible deadlock scenario:
//	            goroutine 8                   goroutine 8
//	            -----------                   -----------
//	            lock(account#2)
//	                                          lock(account#1)
//	            lock(account#1)  <- blocks
//	                                          lock(account#2)  <- blocks
//
//	            *** DEADLOCK ***
//	    FAIL
//
// Here VerifyNone is given a recorder, so that go test ./... passes, and
// the test asserts that the failure was reported.
func TestVerifyNoneCatchesTheInversion(t *testing.T) {
	require.NoError(t, lockordertest.Find(), "no violation before the test")
	quiet(t) // the report goes to the recorder, not to the log of a passing run

	a, b := bank.NewAccount(1, 100), bank.NewAccount(2, 100)
	require.NoError(t, bank.Transfer(a, b, 30)) // locks account#1, then account#2
	require.NoError(t, bank.Transfer(b, a, 10)) // locks account#2, then account#1: the inversion
	assert.Equal(t, 80, a.Balance())
	assert.Equal(t, 120, b.Balance())

	var rec recorder
	lockordertest.VerifyNone(&rec)
	require.Len(t, rec.errs, 1, "VerifyNone failed the test once")
	failure := rec.errs[0]
	assert.Contains(t, failure, "lockordertest: found 1 violation(s)")
	assert.Contains(t, failure, "lock-order-cycle: cycle of 2 locks")
	assert.Contains(t, failure, "bank.go", "with the place of each order")
	assert.Contains(t, failure, "Possible deadlock scenario")
	t.Logf("what VerifyNone would have failed the test with:\n%s", firstLines(failure, 4))

	// Each violation fails one check only: the next one is clean.
	var again recorder
	lockordertest.VerifyNone(&again)
	assert.Empty(t, again.errs)
}

// TestOrderedTransfersAreClean is the fix under the real check: the same
// transfers, in both directions and at the same time, with VerifyNone
// failing the test if any inversion is seen.
func TestOrderedTransfersAreClean(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	a, b := bank.NewAccount(1, 1000), bank.NewAccount(2, 1000)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { assert.NoError(t, bank.TransferOrdered(a, b, 3)) })
		wg.Go(func() { assert.NoError(t, bank.TransferOrdered(b, a, 2)) })
	}
	wg.Wait()
	assert.Equal(t, 1000-50, a.Balance())
	assert.Equal(t, 1000+50, b.Balance())
}

// quiet silences lockorder's default handler, which prints every report to
// standard error, for the rest of the test.
func quiet(t *testing.T) {
	lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithHandler(nil)) })
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfterN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "")
}
