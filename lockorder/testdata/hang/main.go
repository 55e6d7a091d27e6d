// Command hang runs one program whose goroutines all deadlock, in the
// lockorder mode given, as a user's program would: the default handler
// prints, and deadlocks are reported, not panicked on. With sync the
// runtime ends each at once ("all goroutines are asleep"); lockorder must
// still let it. Used by lockorder's TestWhollyDeadlockedProgramEndsAsWithSync.
//
//	hang MODE SHAPE [LONGWAIT]
//
// LONGWAIT, a duration, sets lockorder.WithLongWait.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/syncwatch/syncwatch/lockorder"
)

var shapes = map[string]struct {
	run    func()
	report string
}{
	"abba": {func() {
		a, b := lockorder.NewMutex("hang-a"), lockorder.NewMutex("hang-b")
		aHeld, bHeld := make(chan struct{}), make(chan struct{})
		go func() {
			a.Lock()
			close(aHeld)
			<-bHeld
			b.Lock()
		}()
		b.Lock()
		close(bHeld)
		<-aHeld
		a.Lock()
	}, "lockorder: deadlock: cycle of 2 goroutines"},
	"double-lock": {func() {
		m := lockorder.NewMutex("hang-twice")
		m.Lock()
		m.Lock()
	}, "lockorder: recursive-lock: goroutine"},
	"rlock-then-lock": {func() {
		m := lockorder.NewRWMutex("hang-rw")
		m.RLock()
		m.Lock()
	}, "lockorder: deadlock: cycle of 1 goroutine"},
	"waitgroup": {func() {
		var wg lockorder.WaitGroup
		wg.Add(1)
		wg.Wait()
	}, ""},
	"cond": {func() {
		var mu lockorder.Mutex
		c := lockorder.NewCond(&mu)
		mu.Lock()
		c.Wait()
	}, ""},
	"once-in-its-function": {func() {
		var once lockorder.Once
		once.Do(func() { once.Do(func() {}) })
	}, "lockorder: deadlock: cycle of 1 goroutine"},
	"plain": {func() { <-make(chan int) }, ""}, // no syncwatch wait at all
	"lock-held-over-a-channel": {func() {
		m := lockorder.NewMutex("hang-held")
		m.Lock()
		go func() { m.Lock() }()
		<-make(chan int)
	}, ""},
}

func main() {
	if len(os.Args) != 3 && len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: hang MODE SHAPE [LONGWAIT]")
		os.Exit(64)
	}
	m, err := lockorder.ParseMode(os.Args[1])
	s, ok := shapes[os.Args[2]]
	if err != nil || !ok {
		fmt.Fprintln(os.Stderr, "hang: unknown mode or shape:", os.Args[1], os.Args[2])
		os.Exit(64)
	}
	lockorder.Configure(lockorder.WithMode(m), lockorder.WithDeadlockAction(lockorder.DeadlockReport))
	if len(os.Args) == 4 {
		d, err := time.ParseDuration(os.Args[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, "hang:", err)
			os.Exit(64)
		}
		lockorder.Configure(lockorder.WithLongWait(d))
	}
	s.run()
	fmt.Println("returned")
}
