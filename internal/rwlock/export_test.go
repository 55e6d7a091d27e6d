package rwlock

// Dequeue is dequeue, for tests that give up a queued reader step by step.
func (rw *RWMutex) Dequeue(v int64) bool {
	raceDisable()
	ok := rw.dequeue(v)
	raceEnable()
	return ok
}
