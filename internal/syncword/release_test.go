//go:build !race

package syncword_test

import (
	"runtime"
	"testing"

	"github.com/syncwatch/syncwatch/internal/syncword"
)

// TestFastPathsCompiledIn fails on a Go release whose sync layout has not
// been checked: there the build constraints compile the fast paths out, and
// every lockorder Lock and Unlock would quietly cost a call more. Check the
// layout on the new release (TestVerify, with the constraints widened) and
// widen the constraints of enabled.go and disabled.go.
func TestFastPathsCompiledIn(t *testing.T) {
	if !syncword.Enabled {
		t.Fatalf("fast paths compiled out on %s: its sync.Mutex layout has not been checked", runtime.Version())
	}
}
