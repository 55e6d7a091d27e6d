package main

import (
	"context"
	"time"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Inventory is the service's state: stock counts guarded by one
// lockorder.Mutex, a drop-in for sync.Mutex. In trace mode (the default
// outside tests) it costs what sync.Mutex costs plus one atomic load, and a
// contended wait longer than the threshold (10ms by default) becomes a
// "lock wait" span, a child of the request's span since the handlers lock
// with LockContext.
type Inventory struct {
	mu    *lockorder.Mutex // class "inventory"; guards stock
	stock map[string]int
}

// NewInventory returns an empty inventory.
func NewInventory() *Inventory {
	return &Inventory{mu: lockorder.NewMutex("inventory"), stock: map[string]int{}}
}

// Stock returns the count of item. It waits for the lock at most until
// ctx is done.
func (inv *Inventory) Stock(ctx context.Context, item string) (int, error) {
	if err := inv.mu.LockContext(ctx); err != nil {
		return 0, err
	}
	defer inv.mu.Unlock()
	return inv.stock[item], nil
}

// Restock adds n to the count of item after a recount that takes work,
// done holding the lock: the slow path every reader then waits behind.
func (inv *Inventory) Restock(ctx context.Context, item string, n int, work time.Duration) error {
	if err := inv.mu.LockContext(ctx); err != nil {
		return err
	}
	defer inv.mu.Unlock()
	t := time.NewTimer(work)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	inv.stock[item] += n
	return nil
}

// busy reports whether the lock is held right now (by a restock).
func (inv *Inventory) busy() bool {
	if inv.mu.TryLock() {
		inv.mu.Unlock()
		return false
	}
	return true
}
