//go:build !race && !(amd64 || 386)

package held

import "sync/atomic"

// release clears a busy mark with a release store (on arm64, STLR): the
// owner's earlier writes to its state are visible before the mark is.
func release(busy *uint32) { atomic.StoreUint32(busy, 0) }
