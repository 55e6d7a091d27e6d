package bench

// scenario is one lock-usage pattern for Detect.
type scenario struct {
	name string
	bug  bool
	run  func(k kit)
}

// scenarios are the patterns Detect runs, known deadlocks first, then safe
// patterns that a detector must not report. Class names are prefixed so
// that they cannot meet the classes of a program that calls Detect.
var scenarios = []scenario{
	{"2-lock inversion (A->B, then B->A)", true, func(k kit) {
		a, b := k.mutex("bench.abba.A"), k.mutex("bench.abba.B")
		inTurn(
			func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() },
			func() { b.Lock(); a.Lock(); a.Unlock(); b.Unlock() },
		)
	}},
	{"3-lock cycle (A->B, B->C, C->A)", true, func(k kit) {
		a, b, c := k.mutex("bench.abc.A"), k.mutex("bench.abc.B"), k.mutex("bench.abc.C")
		inTurn(
			func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() },
			func() { b.Lock(); c.Lock(); c.Unlock(); b.Unlock() },
			func() { c.Lock(); a.Lock(); a.Unlock(); c.Unlock() },
		)
	}},
	{"class-level cycle across instances (store#1->replica#1, replica#2->store#2)", true, func(k kit) {
		s1, s2 := k.mutex("bench.class.store"), k.mutex("bench.class.store")
		r1, r2 := k.mutex("bench.class.replica"), k.mutex("bench.class.replica")
		inTurn(
			func() { s1.Lock(); r1.Lock(); r1.Unlock(); s1.Unlock() },
			func() { r2.Lock(); s2.Lock(); s2.Unlock(); r2.Unlock() },
		)
	}},
	{"inversion through RLocker() (M->RW read, RW write->M)", true, func(k kit) {
		m, rw := k.mutex("bench.rlocker.M"), k.rwMutex("bench.rlocker.RW")
		inTurn(
			func() {
				m.Lock()
				r := rw.RLocker()
				r.Lock()
				r.Unlock()
				m.Unlock()
			},
			func() { rw.Lock(); m.Lock(); m.Unlock(); rw.Unlock() },
		)
	}},
	{"TryLock back-off (A->B, then B held, TryLock A)", false, func(k kit) {
		a, b := k.mutex("bench.try.A"), k.mutex("bench.try.B")
		inTurn(
			func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() },
			func() {
				b.Lock()
				if a.TryLock() {
					a.Unlock()
				}
				b.Unlock()
			},
		)
	}},
	{"read/read inversion, no writer (X->Y, Y->X, RLock only)", false, func(k kit) {
		x, y := k.rwMutex("bench.rr.X"), k.rwMutex("bench.rr.Y")
		inTurn(
			func() { x.RLock(); y.RLock(); y.RUnlock(); x.RUnlock() },
			func() { y.RLock(); x.RLock(); x.RUnlock(); y.RUnlock() },
		)
	}},
}
