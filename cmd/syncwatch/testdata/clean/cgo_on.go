//go:build cgo

package counter

// CgoEnabled reports whether the package was built with cgo.
const CgoEnabled = true
