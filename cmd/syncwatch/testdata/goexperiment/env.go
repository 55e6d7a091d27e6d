// Package goexperiment has a lock, so that syncwatch rewrites it.
package goexperiment

import "sync"

var mu sync.Mutex

// Do takes the lock.
func Do() {
	mu.Lock()
	mu.Unlock()
}
