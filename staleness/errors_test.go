package staleness_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/staleness"
)

func TestWaitErrorMessage(t *testing.T) {
	e := &staleness.WaitError{Worker: 2, Clock: 9, Need: 7, Waited: 1500 * time.Millisecond, Err: context.DeadlineExceeded,
		Slowest: []staleness.WorkerClock{{Worker: 5, Clock: 4}}}
	assert.EqualError(t, e, "staleness: worker 2 at clock 9 gave up after 1.5s waiting for worker 5 (clock 4) to reach clock 7: context deadline exceeded")

	for i := range 10 {
		e.Slowest = append(e.Slowest, staleness.WorkerClock{Worker: 10 + i, Clock: 5})
	}
	assert.Contains(t, e.Error(), "workers 5 (clock 4), 10 (clock 5),")
	assert.Contains(t, e.Error(), "16 (clock 5) and 3 more to reach clock 7", "long lists are cut")

	e.Slowest = nil
	assert.Contains(t, e.Error(), "waiting for no worker")
}

func TestWaitErrorMatching(t *testing.T) {
	timeout := &staleness.WaitError{Err: context.DeadlineExceeded}
	canceled := &staleness.WaitError{Err: context.Canceled}
	wrapped := fmt.Errorf("step 7: %w", timeout)
	assert.ErrorIs(t, wrapped, staleness.ErrWaitTimeout)
	assert.ErrorIs(t, wrapped, context.DeadlineExceeded)
	assert.NotErrorIs(t, canceled, staleness.ErrWaitTimeout)
	assert.ErrorIs(t, canceled, context.Canceled)
	assert.Equal(t, "clock-wait-timeout", timeout.ErrorType())
	assert.Equal(t, "clock-wait-canceled", canceled.ErrorType())
}
