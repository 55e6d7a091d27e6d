package main

import (
	"bufio"
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// The packages holding the workloads compiled against sync and lockorder.
const (
	syncImplPkg      = "github.com/syncwatch/syncwatch/bench/internal/impls/syncimpl"
	lockorderImplPkg = "github.com/syncwatch/syncwatch/bench/internal/impls/lockorderimpl"
)

// SameCode is the compiler's evidence that, with -tags syncwatch_off, the
// workloads compile on lockorder to what they compile to on sync: each
// lockorder method call is inlined, and every other inlining and escape
// decision is the same as for sync. RWMutex's RLock and RUnlock are set
// aside: in both builds they run on internal/rwlock (sync's algorithm on a
// reader count of its own, so that a wait can give up), inlined as one
// atomic add as sync's are, but through rwlock's accessor rather than
// sync's atomic.Int32. Mutex.Unlock inlines, where sync inlines its
// Unlock, sync's own uncontended step on sync's own state word (through
// internal/syncword), so that a release can find a LockContext waiting
// beside sync's queue: the two count as the same decision.
type SameCode struct {
	// Inlined counts the lockorder method calls the compiler inlined.
	Inlined int
	// OnlySync and OnlyLockorder list the decisions the two builds do not
	// share, normalized; both are empty when the code is the same.
	OnlySync, OnlyLockorder []string
}

// Same reports whether the two builds made the same decisions and
// inlined at least one lockorder call.
func (s *SameCode) Same() bool {
	return s.Inlined > 0 && len(s.OnlySync) == 0 && len(s.OnlyLockorder) == 0
}

// CheckSameCode compiles the sync and lockorder workloads with
// -tags syncwatch_off and -m and compares the compiler's decisions.
func CheckSameCode() (*SameCode, error) {
	syncOut, err := diagnostics(syncImplPkg)
	if err != nil {
		return nil, err
	}
	loOut, err := diagnostics(lockorderImplPkg)
	if err != nil {
		return nil, err
	}
	return CompareDiagnostics(syncOut, loOut), nil
}

// diagnostics returns the compiler's -m output for pkg, built with the
// syncwatch_off tag. The go command replays it from its cache when the
// package is up to date.
func diagnostics(pkg string) (string, error) {
	cmd := exec.Command("go", "build", "-tags", "syncwatch_off", "-gcflags="+pkg+"=-m", pkg)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build -gcflags=-m %s: %w\n%s", pkg, err, out)
	}
	return string(out), nil
}

// CompareDiagnostics compares -m output for the sync workloads and the
// lockorder workloads. Lines about workloads.go are kept, without their
// path; in the lockorder output, inlining of lockorder's own methods is
// counted and set aside, and lockorder's type names are read as sync's.
func CompareDiagnostics(syncOut, lockorderOut string) *SameCode {
	s := new(SameCode)
	a := normalize(syncOut, nil)
	b := normalize(lockorderOut, &s.Inlined)
	for _, l := range a {
		if !slices.Contains(b, l) {
			s.OnlySync = append(s.OnlySync, l)
		}
	}
	for _, l := range b {
		if !slices.Contains(a, l) {
			s.OnlyLockorder = append(s.OnlyLockorder, l)
		}
	}
	return s
}

// normalize returns the distinct workloads.go diagnostics in out, as
// "line:col: message", sorted. If inlined is not nil, the distinct
// inlinings of lockorder methods are counted there and dropped, and
// lockorder type names are rewritten to sync's.
func normalize(out string, inlined *int) []string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		_, diag, ok := strings.Cut(sc.Text(), "workloads.go:")
		if ok && !slices.Contains(lines, diag) {
			lines = append(lines, diag)
		}
	}
	if inlined != nil {
		kept := lines[:0]
		for _, l := range lines {
			switch {
			case strings.Contains(l, "inlining call to lockorder."):
				*inlined++
				continue
			case strings.Contains(l, "inlining call to rwlock."):
				continue // the read side: see SameCode
			case strings.Contains(l, "inlining call to syncword.State"):
				// Mutex.Unlock's fast path: see SameCode.
				l = strings.Replace(l, "syncword.State", "sync.(*Mutex).Unlock", 1)
			}
			kept = append(kept, strings.ReplaceAll(l, "lockorder.", "sync."))
		}
		lines = kept
	}
	lines = dropReadSide(lines)
	slices.Sort(lines)
	return lines
}

// dropReadSide removes from sync's diagnostics the inlining of
// RWMutex.RLock and RUnlock, and of the atomic add they inline at the same
// place: see SameCode.
func dropReadSide(lines []string) []string {
	read := map[string]bool{}
	for _, l := range lines {
		if strings.Contains(l, "inlining call to sync.(*RWMutex).RLock") || strings.Contains(l, "inlining call to sync.(*RWMutex).RUnlock") {
			pos, _, _ := strings.Cut(l, " ")
			read[pos] = true
		}
	}
	kept := lines[:0]
	for _, l := range lines {
		pos, _, _ := strings.Cut(l, " ")
		if read[pos] && (strings.Contains(l, "sync.(*RWMutex).R") || strings.Contains(l, "atomic.(*Int32).Add")) {
			continue
		}
		kept = append(kept, l)
	}
	return kept
}
