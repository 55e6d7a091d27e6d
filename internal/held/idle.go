//go:build !race

package held

// idle clears a busy mark (G.busy) with a plain store, where an atomic
// store would cost a locked instruction on every outermost Unlock. Only the
// SC store that sets the mark (Wake) and the loads after it take part in
// the handshake (internal/gls): the clearing store only has to become
// visible, and a reclaimer that reads it late sees the state busy and
// leaves it. Each location is coherent on every architecture Go runs on,
// so a reclaimer never reads a clearing store older than the Wake after it.
// Under the race detector the store is atomic (idle_race.go), so that the
// detector checks the rest of the handshake.
func idle(busy *uint32) { *busy = 0 }
