package lockordertest

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/syncwatch/syncwatch/internal/leak"
	"github.com/syncwatch/syncwatch/internal/waitfor"
	"github.com/syncwatch/syncwatch/lockorder"
)

// IgnoreTopFunction ignores leaked goroutines whose top function is f, as
// go.uber.org/goleak's option of that name does: the innermost function
// of the goroutine's stack as the runtime prints it
// ("internal/poll.runtime_pollWait", "sync.runtime_notifyListWait"), or
// the innermost one of its stack as the report shows it, without the
// runtime's, sync's and syncwatch's frames ("mypkg.(*Server).loop").
func IgnoreTopFunction(f string) Option {
	return optionFunc(func(o *options) { o.topFuncs = append(o.topFuncs, f) })
}

// IgnoreCurrent ignores the goroutines that exist when it is called, as
// goleak's option of that name does: a test that starts after a known
// leak takes it first.
func IgnoreCurrent() Option {
	var ids []int64
	for id := range waitfor.Fresh().States() {
		ids = append(ids, id)
	}
	return optionFunc(func(o *options) { o.current = append(o.current, ids...) })
}

// IgnoreLeaks turns the leak check off: VerifyNone and VerifyTestMain do
// not ask the runtime for leaked goroutines, and goroutines blocked in a
// syncwatch wait are reported as blocked-at-exit, as where the runtime
// cannot tell.
func IgnoreLeaks() Option {
	return optionFunc(func(o *options) { o.noLeaks = true })
}

// ignoredLeak reports whether v is a leaked goroutine that o ignores.
func (o *options) ignoredLeak(v lockorder.Violation) bool {
	if v.Kind != lockorder.KindLeaked {
		return false
	}
	if slices.Contains(o.current, v.Goroutine) {
		return true
	}
	if len(v.Stack) > 0 && slices.Contains(o.topFuncs, v.Stack[0].Function) {
		return true
	}
	for _, a := range v.Attrs {
		if a.Key == lockorder.TopFunctionAttribute && slices.Contains(o.topFuncs, a.Value.AsString()) {
			return true
		}
	}
	return false
}

// cannotTell is printed once per process where the runtime cannot detect
// leaked goroutines.
var cannotTell sync.Once

// noteCannotTell says, once, that leaked goroutines go unreported.
func noteCannotTell() {
	if leak.Supported() || lockorder.CurrentMode() == lockorder.ModeOff {
		return
	}
	cannotTell.Do(func() {
		fmt.Fprintf(os.Stderr, "lockordertest: %s cannot tell leaked goroutines (Go 1.27 can, and 1.26 built with GOEXPERIMENT=goroutineleakprofile); only goroutines blocked in syncwatch waits are reported\n", runtime.Version())
	})
}
