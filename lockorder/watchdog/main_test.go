package watchdog_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/lockorder"
)

// TestMain keeps the stalls the tests cause on purpose off standard error
// and fails the run if a goroutine leaked.
func TestMain(m *testing.M) {
	lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}
