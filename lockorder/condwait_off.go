//go:build syncwatch_off

package lockorder

// condID is empty: nothing is named in this build.
type condID struct{}

// block waits for ch to be closed by Signal or Broadcast.
func (c *Cond) block(w *condWaiter) { c.await(w) }

// unlockL unlocks c.L for Wait.
func (c *Cond) unlockL() { c.L.Unlock() }

// relockL locks c.L again for Wait.
func (c *Cond) relockL() { c.L.Lock() }
