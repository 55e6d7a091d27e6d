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
