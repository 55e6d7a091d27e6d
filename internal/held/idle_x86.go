//go:build !race && (amd64 || 386)

package held

// release clears a busy mark: x86 keeps stores in program order.
func release(busy *uint32) { *busy = 0 }
