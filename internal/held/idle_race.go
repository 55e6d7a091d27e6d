//go:build race

package held

import "sync/atomic"

// busyMark sets a busy mark; see idle.go.
func busyMark(busy *uint32) { atomic.StoreUint32(busy, 1) }

// idle clears a busy mark; see idle.go.
func idle(busy *uint32) { atomic.StoreUint32(busy, 0) }
