// Package vendored has a vendor directory, and a library there that calls
// back under its lock.
package vendored

import (
	"os"
	"sync"

	"example.com/vlib"
)

var cache struct {
	sync.Mutex
	m map[string]int
}

var stats struct {
	mu   sync.Mutex
	hits int
}

// Get returns the value of key, and counts a hit.
func Get(key string) int {
	cache.Lock()
	defer cache.Unlock()
	stats.mu.Lock()
	stats.hits++
	stats.mu.Unlock()
	return cache.m[key]
}

// Hits returns the hits; with VENDORED_BA set it holds the cache while
// it reads them, the other order from Get's.
func Hits() int {
	stats.mu.Lock()
	defer stats.mu.Unlock()
	if os.Getenv("VENDORED_BA") != "" {
		cache.Lock()
		cache.Unlock()
	}
	return stats.hits
}

// Store stores v under key through the library, which calls back under
// its own lock: its lock, then the cache.
func Store(key string, v int) {
	vlib.Do(func() {
		cache.Lock()
		defer cache.Unlock()
		if cache.m == nil {
			cache.m = map[string]int{}
		}
		cache.m[key] = v
	})
}

// Flush holds the cache while it calls the library: the cache, then its
// lock, the other order from Store's.
func Flush() {
	cache.Lock()
	defer cache.Unlock()
	vlib.Do(func() {})
}
