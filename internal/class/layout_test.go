package class

import (
	"testing"
	"unsafe"
)

// TestLockLayout pins the layout Lock's comment promises, on a 64-bit
// platform: a Lock fills the 192-byte size class (whose objects start on
// a cache line), and the fields a change of hands writes start a line of
// their own, past the fields every acquisition reads.
func TestLockLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layout is tuned for 64-bit platforms")
	}
	const line = 64
	var l Lock
	if got := unsafe.Sizeof(l); got != 192 {
		t.Errorf("a Lock is %d bytes, want 192 (its size class)", got)
	}
	readEnd := unsafe.Offsetof(l.firstWrite) + unsafe.Sizeof(l.firstWrite)
	if off := unsafe.Offsetof(l.holder); off%line != 0 || off < readEnd {
		t.Errorf("holder at offset %d: want a cache line of its own, past the read-mostly fields (which end at %d)", off, readEnd)
	}
	if off := unsafe.Offsetof(l.Gate); off < unsafe.Offsetof(l.holder) || off+unsafe.Sizeof(l.Gate) > unsafe.Offsetof(l.holder)+line {
		t.Errorf("Gate at offset %d: want it on the written line", off)
	}
}
