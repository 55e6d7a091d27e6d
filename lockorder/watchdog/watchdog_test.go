package watchdog_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/watchdog"
)

// stalls returns the stalled reports of loop name recorded so far.
func stalls(name string) []lockorder.Violation {
	var out []lockorder.Violation
	for _, v := range lockorder.Violations() {
		if v.Kind == watchdog.KindStalled && strings.Contains(v.Message, "loop "+name+" ") {
			out = append(out, v)
		}
	}
	return out
}

// requireReporting skips t in ModeOff, where nothing is reported, and
// starts it with no recorded violations.
func requireReporting(t *testing.T) {
	t.Helper()
	if lockorder.CurrentMode() == lockorder.ModeOff {
		t.Skip("lockorder reports nothing in ModeOff")
	}
	lockorder.Reset()
	t.Cleanup(lockorder.Reset)
}

func stalledNow(name string) (watchdog.Stall, bool) {
	for _, s := range watchdog.Stalls() {
		if s.Loop == name {
			return s, true
		}
	}
	return watchdog.Stall{}, false
}

func TestIdleLoopNeverStalls(t *testing.T) {
	defer goleak.VerifyNone(t)
	loop := watchdog.New("idle", watchdog.WithBound(10*time.Millisecond))
	defer loop.Close()
	loop.Step()
	time.Sleep(150 * time.Millisecond) // time passing: idle for fifteen bounds, some thirty looks
	assert.NoError(t, loop.Check())
	_, stalled := stalledNow("idle")
	assert.False(t, stalled)
	assert.Empty(t, stalls("idle"))
	assert.Zero(t, loop.Status().Stalls)
}

func TestWorkArrivingAtAnIdleLoopStartsTheClock(t *testing.T) {
	defer goleak.VerifyNone(t)
	loop := watchdog.New("arrival", watchdog.WithBound(time.Hour))
	defer loop.Close()
	loop.Step()
	loop.Begin()
	assert.NoError(t, loop.Check(), "work that just arrived has not waited")
	loop.End()
	assert.Zero(t, loop.Pending())
}

// The loop's goroutine blocks on a lock whose holder waits on a channel:
// the stall is reported once, names the lock and the holder's state, and
// clears at the next Step; a later stall is a new report.
func TestStallIsReportedOnceAndSaysWhatTheLoopIsBlockedOn(t *testing.T) {
	requireReporting(t)
	defer goleak.VerifyNone(t)
	const bound = 30 * time.Millisecond
	ledger := lockorder.NewMutex("ledger")
	loop := watchdog.New("consumer", watchdog.WithBound(bound))
	defer loop.Close()

	release := make(chan struct{})
	holding := make(chan struct{})
	go func() { // the holder: stuck on a channel with the lock held
		ledger.Lock()
		close(holding)
		<-release
		ledger.Unlock()
	}()
	<-holding
	jobs := make(chan int, 4)
	done := make(chan struct{})
	go func() { // the loop
		defer close(done)
		for {
			loop.Step()
			j, ok := <-jobs
			if !ok {
				return
			}
			ledger.Lock()
			ledger.Unlock()
			_ = j
			loop.End()
		}
	}()
	loop.Begin()
	jobs <- 1

	require.Eventually(t, func() bool { return len(stalls("consumer")) == 1 }, 10*time.Second, time.Millisecond)
	v := stalls("consumer")[0]
	assert.Equal(t, "watchdog", v.Source)
	assert.Contains(t, v.Message, "loop consumer has not stepped for ")
	assert.Contains(t, v.Message, "with 1 pending")
	assert.Contains(t, v.Message, "blocked on lock ledger#")
	var se *watchdog.StallError
	require.ErrorAs(t, v.Err, &se)
	assert.ErrorIs(t, v.Err, watchdog.ErrStalled)
	assert.Equal(t, "stalled", se.ErrorType())
	assert.Greater(t, se.For, bound)
	if lockorder.CurrentMode() == lockorder.ModeCheck {
		assert.Contains(t, se.BlockedOn, ", held by goroutine ")
		assert.Contains(t, se.BlockedOn, "which is blocked in chan receive at ")
		assert.NotZero(t, v.Holder)
		assert.NotEmpty(t, v.HolderStack)
	}
	assert.NotEmpty(t, v.Stack, "the loop goroutine's stack")

	s, ok := stalledNow("consumer")
	require.True(t, ok)
	assert.Equal(t, 1, s.Pending)
	assert.Equal(t, bound, s.Bound)
	assert.Contains(t, s.BlockedOn, "lock ledger#")
	require.Error(t, loop.Check())
	st := loop.Status()
	require.NotNil(t, st.Stall)
	assert.Equal(t, uint64(1), st.Stalls)

	for range 5 { // many more looks, as the timer's: still one report
		watchdog.Look(loop)
	}
	assert.Len(t, stalls("consumer"), 1, "once per episode")

	close(release) // the loop gets the lock, ends the job and steps
	require.Eventually(t, func() bool { _, ok := stalledNow("consumer"); return !ok && loop.Pending() == 0 },
		10*time.Second, time.Millisecond)
	assert.NoError(t, loop.Check())

	// A second episode: the loop blocks on the channel with work pending.
	// (Past the age of the dump the first report took: dumps are
	// rate-limited, by time.)
	time.Sleep(150 * time.Millisecond)
	loop.Begin() // counted, but never sent
	require.Eventually(t, func() bool { return len(stalls("consumer")) == 2 }, 10*time.Second, time.Millisecond)
	v = stalls("consumer")[1]
	assert.Contains(t, v.Message, "blocked on chan receive at ")
	assert.Contains(t, v.Message, "not a syncwatch wait")
	loop.End()
	close(jobs)
	<-done
}

func TestPendingFunction(t *testing.T) {
	requireReporting(t)
	defer goleak.VerifyNone(t)
	var (
		mu     sync.Mutex
		queued int
	)
	pending := func() int { mu.Lock(); defer mu.Unlock(); return queued }
	loop := watchdog.New("pending-func", watchdog.WithBound(20*time.Millisecond), watchdog.WithPending(pending))
	defer loop.Close()
	time.Sleep(60 * time.Millisecond) // time passing: three bounds with nothing queued
	assert.NoError(t, loop.Check(), "nothing queued: idle")
	mu.Lock()
	queued = 3
	mu.Unlock()
	require.Eventually(t, func() bool { return loop.Check() != nil }, 10*time.Second, time.Millisecond)
	var se *watchdog.StallError
	require.ErrorAs(t, loop.Check(), &se)
	assert.Equal(t, 3, se.Pending)
	assert.Equal(t, "unknown: the loop never called Step, so its goroutine is not known", se.BlockedOn)
	loop.Step()
	assert.NoError(t, loop.Check())
}

func TestCloseStopsWatchingAndLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t)
	before := len(watchdog.Loops())
	var loops []*watchdog.Loop
	for range 50 {
		loops = append(loops, watchdog.New("many", watchdog.WithBound(time.Millisecond)))
	}
	assert.Len(t, watchdog.Loops(), before+50)
	time.Sleep(20 * time.Millisecond) // time passing: their timers look, some twenty times
	for _, l := range loops {
		l.Close()
		l.Close() // idempotent
	}
	assert.Len(t, watchdog.Loops(), before)
}

func TestAHandlerMayCloseTheLoopItIsToldAbout(t *testing.T) {
	requireReporting(t)
	defer goleak.VerifyNone(t)
	var loop *watchdog.Loop
	closed := make(chan struct{})
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		if v.Kind == watchdog.KindStalled && strings.Contains(v.Message, "loop self-closing ") {
			loop.Close()
			close(closed)
		}
	}))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {})) })
	loop = watchdog.New("self-closing", watchdog.WithBound(5*time.Millisecond))
	loop.Begin()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("no stall reported")
	}
}

func TestAHandlerPanicDoesNotStopTheWatching(t *testing.T) {
	requireReporting(t)
	defer goleak.VerifyNone(t)
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		if v.Kind == watchdog.KindStalled {
			panic("handler bug")
		}
	}))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {})) })
	a := watchdog.New("panicky-a", watchdog.WithBound(5*time.Millisecond))
	defer a.Close()
	a.Begin()
	require.Eventually(t, func() bool { return len(stalls("panicky-a")) == 1 }, 10*time.Second, time.Millisecond)
	a.Step() // a new episode is reported too: the timer goes on
	require.Eventually(t, func() bool { return len(stalls("panicky-a")) == 2 }, 10*time.Second, time.Millisecond)
}

func TestProgrammerErrorsPanic(t *testing.T) {
	assert.PanicsWithValue(t, "watchdog: empty loop name", func() { watchdog.New("") })
	assert.PanicsWithValue(t, "watchdog: non-positive bound", func() { watchdog.WithBound(0) })
	loop := watchdog.New("unbalanced")
	defer loop.Close()
	assert.PanicsWithValue(t, `watchdog: End without Begin on loop "unbalanced"`, loop.End)
	assert.Zero(t, loop.Pending())
}

func TestStallErrorMatchesErrStalled(t *testing.T) {
	err := error(&watchdog.StallError{Stall: watchdog.Stall{Loop: "x", BlockedOn: "lock a#1"}})
	assert.True(t, errors.Is(err, watchdog.ErrStalled))
	assert.Contains(t, err.Error(), "watchdog: loop x stalled")
	_ = context.Background
}

// A loop that never steps again while its work is done and comes back,
// again and again, is one stall episode: one report. The episode ends at
// the next Step, and only then.
func TestAFlickeringStallIsOneEpisode(t *testing.T) {
	requireReporting(t)
	defer goleak.VerifyNone(t)
	loop := watchdog.New("flicker", watchdog.WithBound(time.Nanosecond)) // stalled as soon as work waits
	defer loop.Close()
	loop.Step()
	stalledAndLooked := func() {
		t.Helper()
		require.Eventually(t, func() bool { return loop.Check() != nil }, 10*time.Second, time.Millisecond)
		watchdog.Look(loop) // a look sees the stall: it reports it unless its episode was reported
	}
	loop.Begin()
	stalledAndLooked()
	require.Len(t, stalls("flicker"), 1)
	for range 5 {
		loop.End()
		loop.Begin()
		stalledAndLooked()
	}
	assert.Len(t, stalls("flicker"), 1, "one episode: the loop never stepped")
	assert.Equal(t, uint64(1), loop.Status().Stalls)

	loop.Step() // ends the episode; the work still waits: a new one
	stalledAndLooked()
	assert.Len(t, stalls("flicker"), 2)
	assert.Equal(t, uint64(2), loop.Status().Stalls)
	loop.End()
}
