package lockordertest_test

import (
	"iter"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

var (
	hungNever = make(chan int) // global: the runtime cannot prove a leak
	hungNext  func() (int, bool)
	hungGroup lockorder.WaitGroup
)

// Each scenario leaves a goroutine blocked for good in a syncwatch wait
// as the tests end: the program is hung (that goroutine never proceeds),
// and the check says so (W7), whatever else is awake.
var hungAtExit = map[string]func(){
	// Control: a WaitGroup.Wait on a Go'd task blocked for good.
	"wg-one-stuck": func() {
		var wg lockorder.WaitGroup
		wg.Go(func() { <-hungNever })
		go wg.Wait()
		waitBlockedIn("lockorder.(*WaitGroup).Wait")
	},
	// The same, with a second task asleep that will return: Wait still
	// needs the first, which never returns. (Time passing: the task is
	// still asleep when the check looks, however loaded the machine;
	// os.Exit cuts it off.)
	"wg-stuck-and-sleeper": func() {
		var wg lockorder.WaitGroup
		wg.Go(func() { <-hungNever })
		wg.Go(func() { time.Sleep(20 * time.Second) })
		go wg.Wait()
		waitBlockedIn("lockorder.(*WaitGroup).Wait")
	},
	// Control: an Add/Done group whose task exited without Done.
	"wg-add-lost": func() {
		hungGroup.Add(1)
		go hungGroup.Wait()
		waitBlockedIn("lockorder.(*WaitGroup).Wait")
	},
	// The same in a program that called signal.Notify (its goroutine is
	// in "syscall" for the life of the program).
	"wg-add-lost-signal": func() {
		signal.Notify(make(chan os.Signal, 1), os.Interrupt)
		hungGroup.Add(1)
		go hungGroup.Wait()
		waitBlockedIn("lockorder.(*WaitGroup).Wait")
	},
	// A lock held across a yield of an iter.Pull iterator whose consumer
	// never resumes it: the holder is parked ("coroutine") for good.
	"coroutine-holder": func() {
		mu := lockorder.NewMutex("pulled")
		hungNext, _ = iter.Pull(func(yield func(int) bool) {
			mu.Lock()
			defer mu.Unlock()
			yield(1)
			yield(2)
		})
		hungNext()
		go waitFor(mu)
		waitBlockedIn("lockordertest_test.waitFor")
	},
}

// calmAtExit are correct programs whose goroutines wait, as the tests
// end, for one that is asleep and will act: nothing is reported.
var calmAtExit = map[string]func(){
	// Many goroutines at a gate (an Add/Done group) that a goroutine
	// asleep opens later.
	"gate": func() {
		var gate lockorder.WaitGroup
		gate.Add(1)
		for range 200 {
			go gate.Wait()
		}
		go func() {
			time.Sleep(20 * time.Second) // time passing: asleep when the check looks
			gate.Done()
		}()
		waitBlockedIn("lockorder.(*WaitGroup).Wait")
	},
}

func TestAtExitAWaitBlockedForGoodIsReported(t *testing.T) {
	if s := os.Getenv("LOCKORDERTEST_HUNG"); s != "" {
		lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))
		if f := hungAtExit[s]; f != nil {
			lockordertest.VerifyTestMain(funcM(f))
		}
		lockordertest.VerifyTestMain(funcM(calmAtExit[s]))
		return
	}
	if lockorder.CurrentMode() == lockorder.ModeOff {
		t.Skip("built with syncwatch_off")
	}
	run := func(t *testing.T, s string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAtExitAWaitBlockedForGoodIsReported$")
		cmd.Env = append(os.Environ(), "LOCKORDERTEST_HUNG="+s, "GORACE=atexit_sleep_ms=0")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for s := range hungAtExit {
		t.Run(s, func(t *testing.T) {
			out, err := run(t, s)
			if err == nil || !strings.Contains(out, "blocked-at-exit") && !strings.Contains(out, "leaked-goroutine") {
				t.Errorf("a goroutine blocked for good in a syncwatch wait at exit is not reported (exit %v):\n%s", err, out)
			}
		})
	}
	for s := range calmAtExit {
		t.Run(s, func(t *testing.T) {
			if out, err := run(t, s); err != nil {
				t.Errorf("a correct program failed (%v):\n%s", err, out)
			}
		})
	}
}
