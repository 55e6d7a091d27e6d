package bubble

import (
	"bytes"
	"runtime"
	"strconv"
)

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
// a release that has such a waiter to wake).
func ID() uint64 {
	var buf [256]byte
	header := buf[:runtime.Stack(buf[:], false)]
	if i := bytes.IndexByte(header, '\n'); i >= 0 {
		header = header[:i]
	}
	const marker = ", synctest bubble "
	i := bytes.Index(header, []byte(marker))
	if i < 0 {
		if In() {
			return Unknown
		}
		return 0
	}
	digits := header[i+len(marker):]
	end := 0
	for end < len(digits) && '0' <= digits[end] && digits[end] <= '9' {
		end++
	}
	id, err := strconv.ParseUint(string(digits[:end]), 10, 64)
	if err != nil || id == 0 || id == Unknown {
		return Unknown
	}
	return id
}
