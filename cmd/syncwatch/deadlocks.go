package main

import (
	"bytes"
	"io"
	"strings"
)

// deadlockPanic starts the line a test binary prints when lockorder finds
// a deadlock under go test: it panics (lockorder.DeadlockPanic), so the
// binary ends before VerifyTestMain can record its findings.
const deadlockPanic = "panic: lockorder: deadlock: "

// deadlockWatcher passes go test's output through and keeps the
// deadlocks it announces, for the summary.
type deadlockWatcher struct {
	w     io.Writer
	line  []byte
	found []string
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

// scan keeps the message of a deadlock panic in line, which may be a
// JSON event of go test -json.
func (d *deadlockWatcher) scan(line string) {
	_, msg, ok := strings.Cut(line, deadlockPanic)
	if !ok {
		return
	}
	for _, end := range []string{" (the report is above)", `\n`, `"`} {
		msg, _, _ = strings.Cut(msg, end)
	}
	d.found = append(d.found, msg)
}
