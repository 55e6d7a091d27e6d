package bubble

import "runtime"

// Unknown is what ID returns for a bubble it cannot name: a caller in a
// bubble whose traceback does not say which. It is never any bubble's id.
const Unknown = ^uint64(0)

// ID returns the caller's bubble's id, or 0 outside any bubble. Two
// goroutines are in one bubble exactly when their ids are equal and
// neither is Unknown.
//
// The runtime prints the id in a goroutine's traceback header
// ("goroutine 7 [running, synctest bubble 2]:", since Go 1.25), and ID
// reads it there: it costs a traceback of the caller, a microsecond or
// two, so callers use it only on paths already slow (a wait in a bubble,
// a release that has such a waiter to wake). It parses by hand: bytes and
// strconv would grow every program that links a lock (lockorder's
// TestBinarySize).
func ID() uint64 {
	var buf [256]byte
	header := buf[:runtime.Stack(buf[:], false)]
	for i, c := range header {
		if c == '\n' {
			header = header[:i]
			break
		}
	}
	const marker = ", synctest bubble "
	at := -1
	for i := 0; i+len(marker) <= len(header); i++ {
		if string(header[i:i+len(marker)]) == marker {
			at = i + len(marker)
			break
		}
	}
	if at < 0 {
		return 0 // (TestID fails if a release of Go no longer names bubbles)
	}
	var id uint64
	digits := 0
	for _, c := range header[at:] {
		if c < '0' || c > '9' {
			break
		}
		if id > (Unknown-9)/10 {
			return Unknown // past any id the runtime gives
		}
		id = id*10 + uint64(c-'0')
		digits++
	}
	if digits == 0 || id == 0 || id == Unknown {
		return Unknown
	}
	return id
}
