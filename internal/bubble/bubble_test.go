package bubble_test

import (
	"sync/atomic"
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

// ID names the caller's bubble: 0 outside any, the same id in every
// goroutine of one bubble, another in another bubble.
func TestID(t *testing.T) {
	if id := bubble.ID(); id != 0 {
		t.Fatalf("ID outside a bubble = %d", id)
	}
	ids := make([]uint64, 2)
	for i := range ids {
		synctest.Test(t, func(t *testing.T) {
			ids[i] = bubble.ID()
			inner := make(chan uint64)
			go func() { inner <- bubble.ID() }()
			if got := <-inner; got != ids[i] {
				t.Errorf("a goroutine of the bubble has ID %d, its starter %d", got, ids[i])
			}
		})
	}
	for _, id := range ids {
		if id == 0 || id == bubble.Unknown {
			t.Fatalf("ID in a bubble = %d: the runtime's traceback no longer names the bubble", id)
		}
	}
	if ids[0] == ids[1] {
		t.Fatalf("two bubbles have one ID, %d", ids[0])
	}
}

// Outside's values are made outside any bubble, whether Get is called in
// one or not: a channel it hands to a bubble can be used from outside,
// and from another bubble, without a fatal error. More Gets in a bubble
// than one refill makes wait for the next.
func TestOutsideMakesNoBubbleValues(t *testing.T) {
	var made atomic.Int64 // a refill may still run when the test reads it
	o := bubble.Outside[chan int]{New: func() chan int {
		made.Add(1)
		return make(chan int, 1)
	}}
	var got []chan int
	for range 2 {
		synctest.Test(t, func(t *testing.T) {
			for range 40 {
				got = append(got, o.Get())
			}
		})
	}
	got = append(got, o.Get()) // outside: made at once
	for i, ch := range got {
		ch <- i // fatal if ch were a bubble's
		if v := <-ch; v != i {
			t.Fatalf("channel %d gave %d", i, v)
		}
	}
	if n := made.Load(); n < int64(len(got)) {
		t.Fatalf("New made %d values for %d Gets", n, len(got))
	}
}
