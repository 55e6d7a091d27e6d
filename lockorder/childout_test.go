//go:build !syncwatch_off

package lockorder_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/leak"
	"github.com/syncwatch/syncwatch/internal/testchild"
)

// childUntil runs cmd until it prints a line containing until (then kills
// it) or exits by itself (exited); see testchild.Until.
func childUntil(t *testing.T, cmd *exec.Cmd, until string) (out string, exited bool) {
	t.Helper()
	out, exited, err := testchild.Until(cmd, until, 3*time.Minute)
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	return out, exited
}

// proofAvailable reports whether the runtime's leak detection can prove
// a deadlock in this binary, which a deadlock action needs (RULES.md W1).
func proofAvailable() bool { return leak.Supported() }
