package bubble_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/syncwatch/syncwatch/internal/bubble"
)

func TestIn(t *testing.T) {
	if bubble.In() {
		t.Fatal("In outside a bubble")
	}
	synctest.Test(t, func(t *testing.T) {
		if !bubble.In() {
			t.Fatal("not In inside a bubble")
		}
		done := make(chan bool)
		go func() { done <- bubble.In() }() // a goroutine of the bubble
		if !<-done {
			t.Fatal("not In in a goroutine started in a bubble")
		}
	})
}

// Later runs f outside the bubble: a channel it makes is usable from
// outside after the bubble ended (a channel of the bubble would be a fatal
// error), and a timer it makes runs on the real clock.
func TestLaterRunsOutsideTheBubble(t *testing.T) {
	made := make(chan struct{}) // of no bubble
	var ch chan int
	fired := make(chan struct{})
	synctest.Test(t, func(t *testing.T) {
		bubble.Later(func() {
			ch = make(chan int, 1)
			time.AfterFunc(time.Millisecond, func() { close(fired) })
			close(made)
		})
	})
	<-made
	ch <- 2 // fatal if ch were the bubble's
	if got := <-ch; got != 2 {
		t.Fatalf("got %d", got)
	}
	<-fired
}
