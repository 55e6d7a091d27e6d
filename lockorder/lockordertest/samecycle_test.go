package lockordertest_test

import (
	"strings"
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

// A report that a later occurrence is grouped under must not hide the
// reports made before that occurrence: the final list of VerifyTestMain
// shows every distinct report printed while the tests ran.
func TestLaterInstanceDoesNotHideEarlierReports(t *testing.T) {
	setup(t)
	a, b := &account{}, &account{}
	transfer(a, b)
	transfer(b, a) // report 1: transfer's cycle
	inversion("hideX", "hideY")
	c, d := &account{}, &account{}
	transfer(c, d)
	transfer(d, c) // a later instance of report 1
	err := lockordertest.Find()
	if err == nil {
		t.Fatal("no report found")
	}
	for _, want := range []string{"found 2 violation(s)", "hideY -> hideX -> hideY", "seen on 2 instances"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the list lacks %q:\n%v", want, err)
		}
	}
	if err := lockordertest.Find(); err != nil {
		t.Errorf("a second check found again what the first returned:\n%v", err)
	}
}
