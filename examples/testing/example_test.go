package bank_test

import (
	"fmt"

	bank "github.com/syncwatch/syncwatch/examples/testing"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// Two transfers in opposite directions, one after the other, never
// deadlock; lockordertest.Find (what VerifyNone calls) still reports the
// inversion of the two account locks.
//
// The same inversion is reported once per program (later instances are
// counted on the first report), and the tests of this package run it
// before the example: the example starts from a clean slate.
func Example() {
	lockorder.Reset()
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) { fmt.Println("reported:", v.Kind) }))
	defer lockorder.Configure(lockorder.WithHandler(nil))

	a, b := bank.NewAccount(1, 100), bank.NewAccount(2, 100)
	_ = bank.Transfer(a, b, 30)
	_ = bank.Transfer(b, a, 10)
	fmt.Println("balances:", a.Balance(), b.Balance())
	fmt.Println("lockordertest finds it:", lockordertest.Find() != nil)

	c, d := bank.NewAccount(3, 100), bank.NewAccount(4, 100)
	_ = bank.TransferOrdered(c, d, 30)
	_ = bank.TransferOrdered(d, c, 10)
	fmt.Println("ordered transfers clean:", lockordertest.Find() == nil)
	// Output:
	// reported: lock-order-cycle
	// balances: 80 120
	// lockordertest finds it: true
	// ordered transfers clean: true
}
