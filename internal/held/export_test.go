package held

import "github.com/syncwatch/syncwatch/internal/chain"

// Waiting reports whether there is a Wait for chain key of the given epoch
// whose every source still stands: its edges need not be seen again. It
// is one length test when nothing waits.
func (ws *waits) Waiting(key chain.Key, epoch uint32) bool {
	if len(ws.waits) == 0 {
		return false
	}
	found, stands := ws.waiting(key, epoch)
	return found && stands
}

// Proving is proving, for tests of a goroutine's edges from write holds
// on their own.
type Proving = proving

// MaxProvingAt is maxProvingAt.
const MaxProvingAt = maxProvingAt

// ProvingKey is proving.provingKey.
func (p *proving) ProvingKey(key chain.Key, epoch uint32) bool { return p.provingKey(key, epoch) }

// FromID returns the ID of the lock held.
func (e *Edge) FromID() uint64 { return e.fromID }

// Moves is e's moves: the held lock's Moves() when the edge was seen.
func (e *Edge) Moves() uint64 { return e.moves }
