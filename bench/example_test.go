//go:build !syncwatch_off

package bench_test

import (
	"fmt"

	"github.com/syncwatch/syncwatch/bench"
)

// Detect runs each scenario under lockorder and go-deadlock and says who
// reported what; a report is correct when the pattern can deadlock.
func ExampleDetect() {
	for _, d := range bench.Detect() {
		fmt.Printf("%-6v lockorder=%-5v go-deadlock=%-5v %s\n", d.Bug, d.Lockorder, d.Deadlock, d.Scenario)
	}
	// Output:
	// true   lockorder=true  go-deadlock=true  2-lock inversion (A->B, then B->A)
	// true   lockorder=true  go-deadlock=false 3-lock cycle (A->B, B->C, C->A)
	// true   lockorder=true  go-deadlock=false class-level cycle across instances (store#1->replica#1, replica#2->store#2)
	// true   lockorder=true  go-deadlock=false inversion through RLocker() (M->RW read, RW write->M)
	// false  lockorder=false go-deadlock=true  TryLock back-off (A->B, then B held, TryLock A)
	// false  lockorder=false go-deadlock=true  read/read inversion, no writer (X->Y, Y->X, RLock only)
}
