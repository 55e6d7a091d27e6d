// Package bank moves money between accounts, locking both: in the order
// of the call, which deadlocks when two transfers cross.
package bank

import "sync"

// Account is a balance behind a lock.
type Account struct {
	mu      sync.Mutex
	balance int
}

// Transfer moves n from a to b.
func Transfer(a, b *Account, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	a.balance -= n
	b.balance += n
}
