package hang

import "testing"

// TestHang deadlocks for good: each goroutine holds the lock the other
// waits for.
func TestHang(t *testing.T) {
	var s Store
	a, b := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() { s.Write(a, b); close(done) }()
	s.Flush(b, a)
	<-done
}
