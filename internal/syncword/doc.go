// Package syncword locates sync.Mutex's state word, so that lockorder can
// inline a fast path: the one compare-and-swap that sync's own Lock and
// Unlock do when nothing has to wait. (lockorder's RWMutex needs no such
// thing: its reader count is its own, see internal/rwlock.)
//
// lockorder's Lock cannot be inlined into its caller (it has a checking
// path), so wrapping sync.Mutex.Lock costs a function call on every lock;
// on a small machine that is a third of an uncontended Lock/Unlock. With
// these offsets the wrapper's inlinable part does the uncontended case
// itself, on sync's own state word, and leaves every other case (waiters,
// starvation) to sync's methods. The compare-and-swap is written out at the
// call site, not wrapped in a helper here, because the wrapper must fit the
// inliner's budget.
//
// Reading sync's unexported state relies on its layout, so the fast paths
// are guarded three ways: they are compiled only for the Go releases whose
// layout has been checked (go1.24 up to go1.27, see enabled.go), never
// under the race detector (sync tells the detector about its own fast path,
// and a fast path that bypassed that would make it report false races), and
// [Verify] checks the layout at run time so that the caller can turn them
// off if a build ever disagrees. Callers must use the offsets only while
// Verify reports true; otherwise they use sync's methods.
package syncword
