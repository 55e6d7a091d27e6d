//go:build !race

package held

// The owner's marks (G.busy) are plain stores outside race builds, where
// an atomic store would cost a locked instruction on every outermost Lock
// and Unlock. The handshake in internal/gls stays sound because the
// reclaimer, between announcing a take and reading the mark, fences (gls's
// fence: the kernel's process-wide barrier, or a stop-the-world): every
// goroutine that was running has then made its earlier stores visible,
// and every goroutine that runs afterwards sees the announcement. So a plain store is as good as a sequentially
// consistent one for the only reader that matters. Each location is
// coherent on every architecture Go runs on, so a reclaimer never reads a
// mark older than a later one by the same owner. Under the race detector,
// which does not see a fence as synchronisation, the stores are
// atomic (idle_race.go), and the detector checks the rest of the
// handshake.

// busyMark sets a busy mark.
func busyMark(busy *uint32) { *busy = 1 }

// idle clears a busy mark. It must not become visible before the owner's
// earlier writes to its state (what Remnant reads once the reclaimer sees
// the state idle): on x86, stores are seen in program order, and it is a
// plain store; elsewhere it is a release store (idle_weak.go).
func idle(busy *uint32) { release(busy) }
