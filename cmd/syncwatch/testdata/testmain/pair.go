// Package pair takes two locks, in either order.
package pair

import "sync"

var a, b sync.Mutex

// AB locks a then b.
func AB() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() }

// BA locks b then a.
func BA() { b.Lock(); a.Lock(); a.Unlock(); b.Unlock() }
