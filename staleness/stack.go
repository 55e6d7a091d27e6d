package staleness

import (
	"strings"

	"github.com/syncwatch/syncwatch/internal/stack"
	"github.com/syncwatch/syncwatch/lockorder"
)

// pkgPrefix marks this package's own frames, which are left out of the
// stacks in reports so that a stack starts at the caller of Advance.
const pkgPrefix = "github.com/syncwatch/syncwatch/staleness."

// callerStack returns the calling goroutine's stack without this
// package's frames (its tests' frames are kept).
func callerStack() lockorder.Stack {
	fs := stack.Frames(stack.Capture())
	for len(fs) > 0 && strings.HasPrefix(fs[0].Function, pkgPrefix) {
		fs = fs[1:]
	}
	out := make(lockorder.Stack, len(fs))
	for i, f := range fs {
		out[i] = lockorder.Frame(f)
	}
	return out
}
