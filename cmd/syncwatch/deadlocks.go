package main

import (
	"bytes"
	"io"
	"strings"

	"github.com/syncwatch/syncwatch/lockorder"
)

// deadlockPanic starts the line a test binary prints when lockorder finds
// a deadlock under go test and the runtime proves it: it panics
// (lockorder.DeadlockPanic), so the binary ends before VerifyTestMain can
// record its findings.
const deadlockPanic = "panic: lockorder: deadlock: "

// A deadlock seen only as every goroutine blocked (docs/RULES.md W1) is
// printed in full at once, and its binary goes on, as with sync: if the
// waits never end, it ends at its -timeout (timedOut), again before
// VerifyTestMain can record its findings. unproven is what its report's
// first line says of the goroutines.
const (
	unproven = "as is every goroutine of the program"
	timedOut = "panic: test timed out after "
)

// deadlockWatcher passes go test's output through and keeps the
// deadlocks it announces, for the summary.
type deadlockWatcher struct {
	w     io.Writer
	line  []byte
	found []*finding
	// unproven are the deadlocks reported on evidence that is not proof,
	// which count only if a binary timed out (timedOut).
	unproven []*finding
	timedOut bool
}

func (d *deadlockWatcher) Write(p []byte) (int, error) {
	n, err := d.w.Write(p)
	d.line = append(d.line, p[:n]...)
	for {
		i := bytes.IndexByte(d.line, '\n')
		if i < 0 {
			break
		}
		d.scan(string(d.line[:i]))
		d.line = d.line[i+1:]
	}
	return n, err
}

// scan keeps the deadlock announced in line, which may be a JSON event of
// go test -json.
func (d *deadlockWatcher) scan(line string) {
	if strings.Contains(line, timedOut) {
		d.timedOut = true
	}
	if _, msg, ok := strings.Cut(line, deadlockPanic); ok {
		d.found = append(d.found, deadlockFinding(lockorder.KindDeadlock, messageOf(msg, " (the report is above)")))
		return
	}
	for _, k := range []lockorder.Kind{lockorder.KindDeadlock, lockorder.KindRecursiveLock} {
		if _, msg, ok := strings.Cut(line, "lockorder: "+string(k)+": "); ok && strings.Contains(msg, unproven) {
			d.unproven = append(d.unproven, deadlockFinding(k, messageOf(msg)))
			return
		}
	}
}

// messageOf cuts msg, the rest of a line, at the end of a report's
// message: the end of the line (of a JSON event's output too), or any of
// ends.
func messageOf(msg string, ends ...string) string {
	for _, end := range append(ends, `\n`, `"`) {
		msg, _, _ = strings.Cut(msg, end)
	}
	return msg
}

// findings returns the deadlocks the output announced that ended a test
// binary: proved, or reported on evidence when a binary then timed out.
func (d *deadlockWatcher) findings() []*finding {
	if !d.timedOut {
		return d.found
	}
	return append(d.found, d.unproven...)
}
