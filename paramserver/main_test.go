package paramserver_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// TestMain fails the run if any test leaves a lock-order problem, or any
// report that is not expected, behind: the shard locks must never be
// reported. The handler is silenced because some tests provoke reports on
// purpose and assert on them.
func TestMain(m *testing.M) {
	lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))
	lockordertest.VerifyTestMain(m)
}
