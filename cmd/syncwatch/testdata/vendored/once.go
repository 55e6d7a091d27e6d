// Package vendored has a vendor directory and a lazily made value.
package vendored

import "sync"

var (
	once  sync.Once
	value int
)

// Value makes the value once.
func Value() int {
	once.Do(func() { value = 42 })
	return value
}
