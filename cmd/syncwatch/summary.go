package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// finding is one distinct finding across the run's test binaries.
type finding struct {
	lockordertest.Finding
	binaries  []string
	tests     []string
	instances int
	// keys are the Keys merged, by binary.
	keys map[string]string
}

// mergeKey says which findings of the run's binaries are one: a cycle's
// Key, made of the code that took its locks (not of the instances', nor
// of the functions that first locked them: see lockorder's
// cycleViolation), and otherwise the kind, the classes of the locks and
// the code sites, as a reader sees them.
func mergeKey(one lockordertest.Finding) string {
	if one.Kind == lockorder.KindCycle && one.Key != "" {
		return string(one.Kind) + "\x00" + one.Key
	}
	return strings.Join(append(append([]string{string(one.Kind)}, one.Classes...), one.Sites...), "\x00")
}

// takes reports whether one, a finding with fd's merge key, is fd's: it
// is not if fd holds a finding of another Key from one's binary. A binary
// records each of its Keys once and prints each as a finding of its own,
// so the summary never folds two findings a binary told apart; but for
// leaked goroutines, which a binary reports one by one (a test fails on
// each of its own), the summary counts those blocked at one place, on
// the same classes of locks, as one finding with an instance each.
func (fd *finding) takes(one lockordertest.Finding) bool {
	if one.Kind == lockorder.KindLeaked {
		return true
	}
	k, ok := fd.keys[one.Binary]
	return !ok || k == one.Key
}

// readFindings reads the JSON lines the test binaries appended to path
// and merges those with the same key.
func readFindings(path string) ([]*finding, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	byKey := map[string][]*finding{}
	var order []*finding
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var one lockordertest.Finding
		if err := json.Unmarshal(sc.Bytes(), &one); err != nil {
			return nil, fmt.Errorf("syncwatch: reading findings: %w", err)
		}
		key := mergeKey(one)
		i := slices.IndexFunc(byKey[key], func(fd *finding) bool { return fd.takes(one) })
		if i < 0 {
			byKey[key] = append(byKey[key], &finding{Finding: one, keys: map[string]string{}})
			i = len(byKey[key]) - 1
			order = append(order, byKey[key][i])
		}
		fd := byKey[key][i]
		fd.keys[one.Binary] = one.Key
		fd.instances += one.Instances
		if !slices.Contains(fd.binaries, one.Binary) {
			fd.binaries = append(fd.binaries, one.Binary)
		}
		for _, t := range append([]string{one.Test}, one.Tests...) {
			if t != "" && !slices.Contains(fd.tests, t) {
				fd.tests = append(fd.tests, t)
			}
		}
	}
	return order, sc.Err()
}

// writeSummary prints each distinct finding once.
func writeSummary(w io.Writer, fs []*finding) {
	if len(fs) == 0 {
		return
	}
	leaks := 0
	for _, f := range fs {
		if f.Kind == lockorder.KindLeaked {
			leaks++
		}
	}
	// Leaks (goroutines blocked for good on anything, a channel too) are
	// told apart from what locks showed: a suite whose tests leave
	// goroutines behind fails for those alone.
	kinds := ""
	switch {
	case leaks == len(fs):
		kinds = ", all leaked-goroutine (goroutines left blocked for good)"
	case leaks > 0:
		kinds = fmt.Sprintf(": %d leaked-goroutine (goroutines left blocked for good), %d of other kinds", leaks, len(fs)-leaks)
	}
	fmt.Fprintf(w, "\nsyncwatch: %d distinct finding(s)%s\n", len(fs), kinds)
	for i, f := range fs {
		fmt.Fprintf(w, "\n%d. %s: %s\n", i+1, f.Kind, f.Message)
		if len(f.Locks) > 0 {
			fmt.Fprintf(w, "   locks: %s\n", strings.Join(f.Locks, ", "))
		}
		writeSites(w, f)
		tests := "no test named"
		if len(f.tests) > 0 {
			tests = fmt.Sprintf("%d test(s): %s", len(f.tests), strings.Join(f.tests, ", "))
		}
		switch {
		case len(f.binaries) == 0 && strings.Contains(f.Message, unprovenWords):
			fmt.Fprintf(w, "   its test binary then ran into its -timeout (the report is above)\n")
			continue
		case len(f.binaries) == 0:
			fmt.Fprintf(w, "   it ended its test binary (the report is above)\n")
			continue
		}
		fmt.Fprintf(w, "   seen in %s; %d instance(s); in %s\n", tests, f.instances, strings.Join(f.binaries, ", "))
	}
}

// deadlockFinding is a deadlock (of kind k: a deadlock or a
// recursive-lock) that ended its test binary, known only by its message.
func deadlockFinding(k lockorder.Kind, msg string) *finding {
	f := &finding{instances: 1}
	f.Kind, f.Message = k, msg
	return f
}

// writeSites prints f's code sites, each once: the orders of a cycle
// that one line took in turn (a transfer that locks its two accounts in
// argument order) are that line's, with their count.
func writeSites(w io.Writer, f *finding) {
	count := map[string]int{}
	for _, s := range f.Sites {
		count[s]++
	}
	for _, s := range f.Sites {
		switch n := count[s]; {
		case n == 0:
			continue // printed
		case n > 1 && f.Kind == lockorder.KindCycle:
			fmt.Fprintf(w, "   at %s (%d of the cycle's orders)\n", s, n)
		case n > 1:
			fmt.Fprintf(w, "   at %s (%d times)\n", s, n)
		default:
			fmt.Fprintf(w, "   at %s\n", s)
		}
		count[s] = 0
	}
}
