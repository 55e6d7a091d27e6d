// Package harness is a test harness that runs the tests and exits by
// itself, as goleak.VerifyTestMain does.
package harness

import (
	"fmt"
	"os"
)

// VerifyTestMain runs m's tests, says so, and exits with their code.
func VerifyTestMain(m interface{ Run() int }) {
	code := m.Run()
	fmt.Println("harness: after")
	os.Exit(code)
}
