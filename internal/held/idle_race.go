//go:build race

package held

import "sync/atomic"

// idle clears a busy mark; see idle.go.
func idle(busy *uint32) { atomic.StoreUint32(busy, 0) }
