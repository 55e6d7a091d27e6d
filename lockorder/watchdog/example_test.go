//go:build !syncwatch_off

package watchdog_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/watchdog"
)

// A queue consumer watched with a 50ms bound: a job it cannot finish
// (here, it waits for a reply that never comes) is a stall, reported once
// with what the loop is blocked on. While the queue is empty, the loop is
// idle and never stalled.
func Example() {
	reported := make(chan lockorder.Violation, 1)
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		if v.Kind == watchdog.KindStalled {
			reported <- v
		}
	}))
	defer lockorder.Configure(lockorder.WithHandler(nil))

	loop := watchdog.New("consumer", watchdog.WithBound(50*time.Millisecond))
	defer loop.Close()
	jobs := make(chan chan struct{}, 1)
	go func() {
		for {
			loop.Step()
			reply, ok := <-jobs
			if !ok {
				return
			}
			<-reply // the job hangs here
			loop.End()
		}
	}()
	time.Sleep(100 * time.Millisecond) // two bounds pass with the queue empty
	fmt.Println("idle:", loop.Check())

	reply := make(chan struct{})
	loop.Begin()
	jobs <- reply
	v := <-reported
	blockedOn, _, _ := strings.Cut(v.Err.(*watchdog.StallError).BlockedOn, " at ")
	fmt.Println(v.Kind, "- pending:", v.Err.(*watchdog.StallError).Pending, "- blocked on:", blockedOn)

	close(reply) // the job ends; the next Step ends the stall
	close(jobs)
	// Output:
	// idle: <nil>
	// stalled - pending: 1 - blocked on: chan receive
}

// Work counted elsewhere: a function says how much is queued.
func ExampleWithPending() {
	queue := make(chan string, 16)
	loop := watchdog.New("inference",
		watchdog.WithBound(30*time.Second),
		watchdog.WithPending(func() int { return len(queue) }))
	defer loop.Close()
	queue <- "request"
	fmt.Println(loop.Pending(), loop.Check())
	// Output: 1 <nil>
}
