package class

import "sync/atomic"

// readGeneration is a lock's read generation (docs/RULES.md R13): a
// record of a read hold is valid only while the generation it was taken
// in is current. A Lock embeds one, and its methods are called on the
// Lock; the zero value is generation 0.
type readGeneration struct {
	gen atomic.Uint32
}

// ReadGen returns the read-release generation; see BumpReadGen.
func (r *readGeneration) ReadGen() uint32 { return r.gen.Load() }

// BumpReadGen invalidates every goroutine's record of a read hold of the
// lock. It is called when a read hold is released by a goroutine that
// does not hold it: we cannot tell whose hold ended, so none is trusted
// any more. It returns the new generation: 1 the first time.
func (r *readGeneration) BumpReadGen() uint32 { return r.gen.Add(1) }
