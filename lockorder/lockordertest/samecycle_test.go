package lockordertest_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// Test A reproduces a known cycle and checks that it is caught (or a
// VerifyNone with IgnoreClass consumes it). Test B, later in the run, has
// the same bug on its own objects: its check must still fail.
func TestSecondTestWithSameCodeCycleStillFails(t *testing.T) {
	setup(t)
	a, b := &account{}, &account{}
	transfer(a, b)
	transfer(b, a)
	if err := lockordertest.Find(); err == nil {
		t.Fatal("test A: no cycle found")
	}
	// "test B": new objects, same code.
	c, d := &account{}, &account{}
	transfer(c, d)
	transfer(d, c)
	if err := lockordertest.Find(); err == nil {
		t.Error("test B: its own cycle was not reported (folded into test A's record)")
	}
}
