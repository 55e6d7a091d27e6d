package stopped

import (
	"os"
	"testing"
	"time"
)

// TestRunsUntilStopped says it has started, in the file
// SYNCWATCH_E2E_STARTED names, and then runs until it is stopped.
func TestRunsUntilStopped(t *testing.T) {
	if err := os.WriteFile(os.Getenv("SYNCWATCH_E2E_STARTED"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Minute)
}
