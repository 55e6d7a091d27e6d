//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// takeBothOrders takes a then b, then b then a: a cycle, found in a
// goroutine whose stack has no test in it (a server's, a pool's).
func takeBothOrders(a, b *lockorder.Mutex, done chan<- struct{}) {
	lockAB(a, b)
	lockAB(b, a)
	close(done)
}

// startServer starts takeBothOrders from a goroutine of its own, which
// stays until stop is closed: the test is two goroutines up.
func startServer(a, b *lockorder.Mutex, done chan<- struct{}, stop <-chan struct{}) {
	go takeBothOrders(a, b, done)
	<-stop
}

// startDetached starts takeBothOrders, once started is closed, from a
// goroutine that exits at once: it sends its id to starter first.
func startDetached(a, b *lockorder.Mutex, done, started chan struct{}, starter chan<- int64) {
	go func() {
		<-started
		takeBothOrders(a, b, done)
	}()
	starter <- goroutineID()
}

// A finding made in a goroutine a test started (a server's), whose own
// stack has no test in it, names the test whose goroutine started it,
// through goroutines still running; one whose starters have exited names
// none rather than a wrong one.
func TestAFindingInAGoroutineATestStartedNamesTheTest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(a, b *lockorder.Mutex, done chan struct{}, stop chan struct{})
		want  string
	}{
		{"started by the test", func(a, b *lockorder.Mutex, done, _ chan struct{}) {
			go takeBothOrders(a, b, done)
		}, "TestAFindingInAGoroutineATestStartedNamesTheTest"},
		{"two goroutines down", func(a, b *lockorder.Mutex, done, stop chan struct{}) {
			go startServer(a, b, done, stop)
		}, "TestAFindingInAGoroutineATestStartedNamesTheTest"},
		{"its starter gone", func(a, b *lockorder.Mutex, done, _ chan struct{}) {
			started, starter := make(chan struct{}), make(chan int64)
			go startDetached(a, b, done, started, starter)
			id := <-starter
			waitUntil(t, func() bool { return !goroutineAlive(id) }, "the starter exited")
			close(started)
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fresh(t)
			a := lockorder.NewMutex("ancestry-a")
			b := lockorder.NewMutex("ancestry-b")
			done, stop := make(chan struct{}), make(chan struct{})
			defer close(stop)
			tc.start(a, b, done, stop)
			<-done
			cycles := only(lockorder.KindCycle)
			require.Len(t, cycles, 1)
			assert.Equal(t, tc.want, cycles[0].Test)
		})
	}
}
