package lockorder

import (
	"os"
	"runtime"
)

// fatal ends the program the way sync does for an unlock of an unlocked
// lock: a "fatal error" line and the calling goroutine's stack on standard
// error, exit status 2, no deferred calls and no recovery. A panic could be
// recovered (net/http recovers its handlers'), and the program would go on
// with a lock whose count the misuse has broken, to hang later where
// nothing points back here.
func fatal(msg string) {
	buf := make([]byte, 64<<10)
	buf = buf[:runtime.Stack(buf, false)]
	os.Stderr.WriteString("fatal error: " + msg + "\n\n")
	os.Stderr.Write(buf)
	os.Exit(2)
}
