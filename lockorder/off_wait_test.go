//go:build syncwatch_off

package lockorder_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// In the off build too, an abandoned LockContext says how long it waited:
// at least until its context's deadline.
func TestOffBuildWaitErrorSaysHowLongItWaited(t *testing.T) {
	var (
		m  lockorder.Mutex
		rw lockorder.RWMutex
	)
	m.Lock()
	defer m.Unlock()
	rw.Lock()
	defer rw.Unlock()
	for _, tc := range []struct {
		name string
		lock func(context.Context) error
		want string
	}{
		{"Mutex.LockContext", m.LockContext, "Mutex"},
		{"RWMutex.LockContext", rw.LockContext, "RWMutex"},
		{"RWMutex.RLockContext", rw.RLockContext, "RWMutex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			deadline, _ := ctx.Deadline()
			atLeast := time.Until(deadline) // the wait starts after this
			err := tc.lock(ctx)
			var we *lockorder.WaitError
			require.ErrorAs(t, err, &we)
			assert.Equal(t, tc.want, we.Lock)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.GreaterOrEqual(t, we.Waited, atLeast)
			assert.Positive(t, we.Waited)
			assert.Contains(t, err.Error(), "lockorder: gave up waiting for "+tc.want+" after ")
			t.Logf("%v", err)
		})
	}
}
