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

// A channel made by Outside in a bubble belongs to none: a goroutine
// outside the bubble can use it after the bubble ended (a channel of the
// bubble would be a fatal error).
func TestOutsideMakesStateOfNoBubble(t *testing.T) {
	var ch chan int
	var timer *time.Timer
	fired := make(chan struct{})
	synctest.Test(t, func(t *testing.T) {
		bubble.Outside(func() {
			ch = make(chan int, 1)
			timer = time.AfterFunc(time.Hour, func() { close(fired) })
		})
		ch <- 1
		<-ch
	})
	ch <- 2 // outside: fatal if ch were the bubble's
	if got := <-ch; got != 2 {
		t.Fatalf("got %d", got)
	}
	timer.Reset(time.Millisecond) // fatal if the timer were the bubble's
	<-fired
}

func TestOutsideRunsAtOnceOutsideABubble(t *testing.T) {
	ran := false
	bubble.Outside(func() { ran = true })
	if !ran {
		t.Fatal("f did not run before Outside returned")
	}
}
