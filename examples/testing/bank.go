// Package bank shows, with a deliberate bug, how lockordertest turns a
// lock-order inversion into a test failure the first time a test runs both
// orders, even though the test never deadlocks.
//
// Transfer locks the source account, then the destination. Transfer(a, b)
// and Transfer(b, a) therefore take the two account locks in opposite
// orders: run at the same moment, each can hold one lock and wait forever
// for the other. A test that runs them one after the other always passes
// with sync.Mutex; with lockorder.Mutex (in check mode, the default under
// go test) and lockordertest.VerifyNone, it fails, naming both orders and
// where each was taken. TransferOrdered, the fix, locks the account with
// the lower ID first, whichever way the money goes.
//
// bank_test.go shows VerifyNone catching the inversion. So that
// go test ./... passes, the demonstration hands VerifyNone a recorder
// instead of the test, and asserts that the failure was reported; its
// comment shows what the failure looks like in a real test.
package bank

import (
	"errors"

	"github.com/syncwatch/syncwatch/lockorder"
)

// ErrInsufficientFunds is returned by a transfer of more than the source
// account holds.
var ErrInsufficientFunds = errors.New("bank: insufficient funds")

// Account is a balance guarded by its own lock. All accounts share the lock
// class "account", so lockorder checks how any two of them are nested.
type Account struct {
	ID      int
	mu      *lockorder.Mutex // guards balance
	balance int
}

// NewAccount returns an account with the given ID and balance.
func NewAccount(id, balance int) *Account {
	return &Account{ID: id, mu: lockorder.NewMutex("account"), balance: balance}
}

// Balance returns the account's balance.
func (a *Account) Balance() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.balance
}

// Transfer moves amount from one account to the other. It locks from, then
// to: the deliberate bug. Two transfers in opposite directions lock the
// same two accounts in opposite orders.
func Transfer(from, to *Account, amount int) error {
	from.mu.Lock()
	defer from.mu.Unlock()
	to.mu.Lock()
	defer to.mu.Unlock()
	return move(from, to, amount)
}

// TransferOrdered moves amount like Transfer, but locks the account with
// the lower ID first: one order for every pair, whatever the direction.
func TransferOrdered(from, to *Account, amount int) error {
	first, second := from, to
	if second.ID < first.ID {
		first, second = second, first
	}
	first.mu.Lock()
	defer first.mu.Unlock()
	second.mu.Lock()
	defer second.mu.Unlock()
	return move(from, to, amount)
}

// move moves amount; the caller holds both locks.
func move(from, to *Account, amount int) error {
	if from.balance < amount {
		return ErrInsufficientFunds
	}
	from.balance -= amount
	to.balance += amount
	return nil
}
