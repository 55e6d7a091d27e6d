package bubble

import (
	"runtime"
	"sync"
)

// Outside hands out values made outside any bubble, to callers that may be
// in one: a channel a lock keeps, made on its first contention, must be of
// no bubble, or a wait on it from outside that bubble, or from another, is
// a fatal error. Outside a bubble Get makes the value itself; in one it
// takes it from a small stock, which Later refills outside.
//
// New must be set before the first Get and must not block. The stock
// never holds more than one and a half refills.
type Outside[T any] struct {
	New func() T

	mu    sync.Mutex
	stock []T
	asked bool // a refill is on its way
}

// outsideStock is how many values a refill makes; a refill is asked for
// when the stock falls below half of it, and waited for only when it is
// empty.
const outsideStock = 16

// Get returns a value made by New outside any bubble.
func (o *Outside[T]) Get() T {
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
		var v T
		if n > 0 {
			v = o.stock[n-1]
			var zero T
			o.stock[n-1] = zero
			o.stock = o.stock[:n-1]
		}
		o.mu.Unlock()
		if ask {
			Later(o.refill)
		}
		if n > 0 {
			return v
		}
		// The refill has been asked for: Later has run its collection,
		// and the cleanup goroutine, of no bubble, runs it soon. Waiting
		// for it here is not durable, so the bubble's clock stands still
		// meanwhile, as for any wait that is not.
		runtime.Gosched()
	}
}

// refill adds outsideStock values to the stock. It runs outside any
// bubble.
func (o *Outside[T]) refill() {
	made := make([]T, outsideStock)
	for i := range made {
		made[i] = o.New()
	}
	o.mu.Lock()
	o.stock = append(o.stock, made...)
	o.asked = false
	o.mu.Unlock()
}
