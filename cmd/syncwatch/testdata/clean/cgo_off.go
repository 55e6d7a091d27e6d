//go:build !cgo

package counter

// CgoEnabled reports whether the package was built with cgo.
const CgoEnabled = false

// Twice doubles n.
func Twice(n int) int { return 2 * n }
