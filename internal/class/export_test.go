package class

// SetMaxDormant sets how many dormant classes are kept, for a test, and
// returns a function that restores the default.
func SetMaxDormant(n int) (restore func()) {
	namedMu.Lock()
	maxDormant = n
	namedMu.Unlock()
	return func() {
		namedMu.Lock()
		maxDormant = MaxDormant
		namedMu.Unlock()
	}
}

// Dormant returns the number of dormant classes.
func Dormant() int {
	namedMu.Lock()
	defer namedMu.Unlock()
	return dormant.n
}

// Registered reports whether c is the class found by its name.
func Registered(c *Class) bool {
	namedMu.Lock()
	defer namedMu.Unlock()
	return named[c.Name] == c
}

// SetForget sets Forget, for a test, and returns a function that unsets it.
func SetForget(f func(*Class)) (restore func()) {
	namedMu.Lock()
	Forget = f
	namedMu.Unlock()
	return func() {
		namedMu.Lock()
		Forget = nil
		namedMu.Unlock()
	}
}

// Seq returns l's instance number (Lock.seq).
func (l *Lock) Seq() uint64 { return l.seq }
