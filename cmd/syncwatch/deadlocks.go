package main

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"slices"
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
// VerifyTestMain can record its findings. unprovenWords is what its
// report's first line says of the goroutines.
const (
	unprovenWords = "as is every goroutine of the program"
	timedOut      = "panic: test timed out after "
)

// deadlockWatcher passes go test's output through and keeps the
// deadlocks it announces, for the summary.
type deadlockWatcher struct {
	w     io.Writer
	line  []byte
	found []*finding
	// pkgs is, by package (the "Package" of go test -json's events; ""
	// for plain output, where each package's output comes in one block,
	// ended by its "ok" or "FAIL" line), the deadlocks reported on
	// evidence that is not proof, which count only if that package's
	// binary then timed out.
	pkgs map[string]*unproven
}

// unproven are a package's deadlocks reported on evidence, with the
// goroutines each names, whether its binary timed out, and the goroutines
// the timeout's dump shows: a deadlock counts only if its goroutines were
// all still there (another test's hang may have timed the binary out
// after this one's waits ended).
type unproven struct {
	fs       []*finding
	ids      [][]string
	timedOut bool
	dumped   map[string]bool
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

// event is what scan reads of a go test -json event.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// scan keeps the deadlock announced in line, which may be a JSON event of
// go test -json.
func (d *deadlockWatcher) scan(line string) {
	pkg, out := "", line
	if strings.HasPrefix(line, "{") {
		var e event
		if json.Unmarshal([]byte(line), &e) != nil {
			return
		}
		if e.Action == "pass" || e.Action == "fail" || e.Action == "skip" {
			if e.Test == "" { // the package's end
				d.settle(e.Package)
			}
			return
		}
		pkg, out = e.Package, strings.TrimSuffix(e.Output, "\n")
	} else if strings.HasPrefix(line, "ok  \t") || strings.HasPrefix(line, "FAIL\t") {
		d.settle("") // the end of a package's block of output
		return
	}
	if strings.HasPrefix(out, timedOut) {
		d.pkg(pkg).timedOut = true
		return
	}
	if u := d.pkgs[pkg]; u != nil && u.timedOut {
		if m := dumpHeader.FindStringSubmatch(out); m != nil {
			if u.dumped == nil {
				u.dumped = map[string]bool{}
			}
			u.dumped[m[1]] = true
			return
		}
	}
	if msg, ok := strings.CutPrefix(out, deadlockPanic); ok {
		d.found = append(d.found, deadlockFinding(lockorder.KindDeadlock, messageOf(msg, " (the report is above)")))
		return
	}
	for _, k := range []lockorder.Kind{lockorder.KindDeadlock, lockorder.KindRecursiveLock} {
		// A report printed at once starts its line; the harness's list
		// at the end ("in TestX: lockorder: ...") is in the findings.
		if msg, ok := strings.CutPrefix(out, "lockorder: "+string(k)+": "); ok && strings.Contains(msg, unprovenWords) {
			u := d.pkg(pkg)
			m := messageOf(msg)
			u.fs = append(u.fs, deadlockFinding(k, m))
			var ids []string
			for _, g := range namedGoroutine.FindAllStringSubmatch(m, -1) {
				ids = append(ids, g[1])
			}
			u.ids = append(u.ids, ids)
			return
		}
	}
}

// pkg returns the unproven deadlocks of package pkg.
func (d *deadlockWatcher) pkg(pkg string) *unproven {
	if d.pkgs == nil {
		d.pkgs = map[string]*unproven{}
	}
	u := d.pkgs[pkg]
	if u == nil {
		u = &unproven{}
		d.pkgs[pkg] = u
	}
	return u
}

// settle ends package pkg's output: its unproven deadlocks are found if
// its binary timed out, and forgotten otherwise (its waits ended, or
// VerifyTestMain recorded them).
func (d *deadlockWatcher) settle(pkg string) {
	if u := d.pkgs[pkg]; u != nil {
		for i, f := range u.fs {
			if u.timedOut && len(u.ids[i]) > 0 && !slices.ContainsFunc(u.ids[i], func(id string) bool { return !u.dumped[id] }) {
				d.found = append(d.found, f)
			}
		}
		delete(d.pkgs, pkg)
	}
}

var (
	// dumpHeader is a goroutine's first line in a goroutine dump.
	dumpHeader = regexp.MustCompile(`^goroutine (\d+) \[`)
	// namedGoroutine is a goroutine a report's message names.
	namedGoroutine = regexp.MustCompile(`goroutine (\d+)\b`)
)

// messageOf cuts msg, the rest of a line, at the end of a report's
// message: the end of the line, or any of ends.
func messageOf(msg string, ends ...string) string {
	for _, end := range ends {
		msg, _, _ = strings.Cut(msg, end)
	}
	return msg
}

// findings returns the deadlocks the output announced that ended a test
// binary: proved, or reported on evidence when its binary then timed out.
func (d *deadlockWatcher) findings() []*finding {
	for pkg := range d.pkgs { // a package whose end was not seen (go test killed)
		d.settle(pkg)
	}
	return d.found
}
