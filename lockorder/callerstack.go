package lockorder

import "github.com/syncwatch/syncwatch/internal/stack"

// CallerStack returns the calling goroutine's stack for a [Violation]: it
// starts at the innermost frame outside syncwatch's packages, so a report
// made from inside barrier.Await, say, shows the caller of Await. It
// captures and symbolizes a stack: call it only when reporting.
func CallerStack() Stack { return frames(stack.Capture()) }

// frames returns the interned stack id as a Stack.
func frames(id stack.ID) Stack {
	fs := stack.Frames(id)
	if len(fs) == 0 {
		return nil
	}
	out := make(Stack, len(fs))
	for i, f := range fs {
		out[i] = Frame(f)
	}
	return out
}
