//go:build cgo

package counter

// static int twice(int n) { return 2 * n; }
import "C"

import "sync"

var cgoMu sync.Mutex

// Twice doubles n in C, under a lock.
func Twice(n int) int {
	cgoMu.Lock()
	defer cgoMu.Unlock()
	return int(C.twice(C.int(n)))
}
