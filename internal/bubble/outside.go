package bubble

import (
	"runtime"
	"sync"
)

// Outside hands out values made outside any bubble, to callers that may be
// in one: a channel a lock keeps, made on its first contention, must be of
// no bubble, or a wait on it from outside that bubble, or from another, is
// a fatal error. Outside a bubble Get makes the value itself; in one it
// takes it from a small stock, refilled outside (finalLater). Its values
// are of any type, not a type parameter's: an instance of a generic type
// costs more of every program's size, which lockorder's TestBinarySize
// bounds.
//
// New must be set before the first Get and must not block. The stock
// never holds more than one and a half refills.
type Outside struct {
	New func() any

	mu    sync.Mutex
	stock []any
	asked bool // a refill is on its way
}

// outsideStock is how many values a refill makes; a refill is asked for
// when the stock falls below half of it, and waited for only when it is
// empty.
const outsideStock = 16

// Get returns a value made by New outside any bubble.
func (o *Outside) Get() any {
	if !In() {
		return o.New()
	}
	for {
		o.mu.Lock()
		n := len(o.stock)
		ask := !o.asked && n <= outsideStock/2
		if ask {
			o.asked = true
		}
		var v any
		if n > 0 {
			v = o.stock[n-1]
			o.stock[n-1] = nil
			o.stock = o.stock[:n-1]
		}
		o.mu.Unlock()
		if ask {
			finalLater(o.refill)
		}
		if n > 0 {
			return v
		}
		// The refill has been asked for: finalLater has run its
		// collection, and the finalizer goroutine, of no bubble, runs it
		// soon. Waiting
		// for it here is not durable, so the bubble's clock stands still
		// meanwhile, as for any wait that is not.
		runtime.Gosched()
	}
}

// finalLater is Later on the finalizer goroutine, which belongs to no
// bubble either. Every program that opens a file links finalizers (os
// sets one on each), few link cleanups: Outside is in every program that
// takes a lock, and lockorder's TestBinarySize bounds the syncwatch_off
// build's size. A finalizer that blocks delays those after it, so Later,
// which the wait monitor depends on, runs on the cleanup goroutines.
func finalLater(f func()) {
	p := new(struct {
		_ *int // a pointer: not a tiny allocation, which is freed late
		_ [8]byte
	})
	runtime.SetFinalizer(p, func(*struct {
		_ *int
		_ [8]byte
	}) {
		f()
	})
	runtime.GC()
}

// refill adds outsideStock values to the stock. It runs outside any
// bubble.
func (o *Outside) refill() {
	made := make([]any, outsideStock)
	for i := range made {
		made[i] = o.New()
	}
	o.mu.Lock()
	o.stock = append(o.stock, made...)
	o.asked = false
	o.mu.Unlock()
}
