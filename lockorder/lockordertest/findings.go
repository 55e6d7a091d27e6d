package lockordertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/syncwatch/syncwatch/internal/report"
	"github.com/syncwatch/syncwatch/lockorder"
)

// FindingsEnv names the environment variable that asks VerifyTestMain to
// record its findings in machine form: when it names a file, VerifyTestMain
// appends one JSON object per violation that counts, a [Finding], in one
// write. syncwatch test sets it to gather one summary across packages.
const FindingsEnv = "SYNCWATCH_FINDINGS"

// A Finding is one violation as VerifyTestMain records it for a tool.
type Finding struct {
	// Binary is the test binary's name ("store.test").
	Binary string `json:"binary"`
	// Test is the test whose code appears in the violation's stacks, or "".
	Test string `json:"test,omitempty"`
	// Tests are the tests whose code appears in the stacks of the
	// occurrences grouped under the violation (its TestNames).
	Tests []string `json:"tests,omitempty"`
	// Kind, Message and Key are the violation's.
	Kind    lockorder.Kind `json:"kind"`
	Message string         `json:"message"`
	Key     string         `json:"key"`
	// Locks names the locks involved, as reports do ("store.DB.mu#2"),
	// and Classes their classes ("store.DB.mu"), which name them alike
	// in every test binary.
	Locks   []string `json:"locks,omitempty"`
	Classes []string `json:"classes,omitempty"`
	// Sites are the code sites: for a cycle, where each edge's lock was
	// taken; else where the violation happened.
	Sites []string `json:"sites,omitempty"`
	// Instances is the violation's count of occurrences (at least 1).
	Instances int `json:"instances"`
	// Report is the full human report.
	Report string `json:"report"`
}

// recordFindings appends the violations that count under opts to the file
// named by FindingsEnv, if it is set. A failure to write is printed, not
// fatal: the exit code already says whether the tests passed.
func recordFindings(opts []Option) {
	// syscall.Getenv, not os.Getenv: go test would make the variable,
	// whose value changes with every run, part of the key of its result
	// cache. A cached result is a pass, which has nothing to record.
	path, _ := syscall.Getenv(FindingsEnv)
	if path == "" {
		return
	}
	o := newOptions(opts)
	var buf []byte
	for _, v := range lockorder.Violations() {
		if !o.counts(v) {
			continue
		}
		line, err := json.Marshal(findingOf(v))
		if err != nil {
			continue
		}
		buf = append(append(buf, line...), '\n')
	}
	if len(buf) == 0 {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.Write(buf)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		os.Stderr.WriteString("lockordertest: recording findings: " + err.Error() + "\n")
	}
}

func findingOf(v lockorder.Violation) Finding {
	f := Finding{
		Binary:    filepath.Base(os.Args[0]),
		Test:      v.Test,
		Tests:     v.TestNames(),
		Kind:      v.Kind,
		Message:   v.Message,
		Key:       v.Key,
		Instances: max(v.Instances, 1),
		Report:    v.String(),
	}
	for _, l := range v.Locks {
		f.Locks = append(f.Locks, l.Name)
		f.Classes = append(f.Classes, l.Class)
	}
	for _, e := range v.Cycle {
		if len(e.Stack) > 0 {
			f.Sites = append(f.Sites, e.Stack[0].String())
		}
	}
	if len(f.Sites) == 0 && len(v.Stack) > 0 {
		f.Sites = append(f.Sites, v.Stack[0].String())
	}
	return f
}

// RunAndVerify runs the tests and checks them as VerifyTestMain does, but
// returns the exit code instead of exiting: m.Run's code, or 1 if a
// violation that counts was recorded. It is for a harness that exits by
// itself and takes any TestingM, such as goleak.VerifyTestMain:
//
//	goleak.VerifyTestMain(checked{m}) // checked.Run calls RunAndVerify
func RunAndVerify(m TestingM, opts ...Option) int {
	report.SetHarness(true)
	warmUp()
	code := m.Run()
	if err := verify(opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if s := notFailing(); s != "" {
		fmt.Fprint(os.Stderr, s)
	}
	recordFindings(opts)
	return code
}

// warmUp locks and unlocks a Mutex and read-locks an RWMutex, before the
// tests run: the first acquisition of a process sets up what every later
// one uses (goroutine states, the stack table, the names of places), some
// 50 to 100 µs, which a test that times its first lock would otherwise
// pay.
func warmUp() {
	var mu lockorder.Mutex
	mu.Lock()
	mu.Unlock()
	var rw lockorder.RWMutex
	rw.RLock()
	rw.RUnlock()
}
