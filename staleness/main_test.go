package staleness_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// TestMain fails the run if any test leaves a lock-order problem or an
// unconsumed clock-wait-timeout behind. The handler is silenced because
// some tests provoke timeouts on purpose and assert on them.
func TestMain(m *testing.M) {
	lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))
	lockordertest.VerifyTestMain(m)
}
