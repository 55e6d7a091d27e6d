//go:build !syncwatch_off

package lockorder_test

import (
	"os"
	"testing"

	"github.com/syncwatch/syncwatch/lockorder"
)

// These tests create violations on purpose and assert on
// lockorder.Violations(); the default handler would print every report.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		runChild() // a subprocess test case: does not return
	}
	initialMode = lockorder.CurrentMode().String()
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(lockorder.Violation) {}))
	os.Exit(m.Run())
}

// initialMode is the mode lockorder chose at start-up.
var initialMode string

// run runs f in a new goroutine and waits for it.
func run(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// only returns the violations of kind k.
func only(k lockorder.Kind) []lockorder.Violation {
	var out []lockorder.Violation
	for _, v := range lockorder.Violations() {
		if v.Kind == k {
			out = append(out, v)
		}
	}
	return out
}

// fresh starts a test from an empty graph and record, in check mode.
func fresh(t *testing.T) {
	t.Helper()
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(lockorder.Violation) {}))
	lockorder.Reset()
	t.Cleanup(lockorder.Reset)
}
