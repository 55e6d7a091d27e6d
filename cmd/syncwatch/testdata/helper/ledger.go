// Package ledger has two bugs through one helper: transfer and audit each
// lock two accounts in the order they are given, through withLock.
package ledger

import "sync"

// Account is a balance behind a lock.
type Account struct {
	mu      sync.Mutex
	balance int
}

// withLock runs f holding m.
func withLock(m *sync.Mutex, f func()) {
	m.Lock()
	defer m.Unlock()
	f()
}

// Transfer moves n from a to b.
func Transfer(a, b *Account, n int) {
	withLock(&a.mu, func() { withLock(&b.mu, func() { a.balance -= n; b.balance += n }) })
}

// Audit compares two balances.
func Audit(a, b *Account) bool {
	same := false
	withLock(&a.mu, func() { withLock(&b.mu, func() { same = a.balance == b.balance }) })
	return same
}
