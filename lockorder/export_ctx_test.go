package lockorder

// IdleHelpers returns how many LockContext helper goroutines are queued
// on a lock with no caller waiting for them.
func IdleHelpers() int {
	helpers.mu.Lock()
	defer helpers.mu.Unlock()
	n := 0
	for _, hs := range helpers.idle {
		n += len(hs)
	}
	return n
}
