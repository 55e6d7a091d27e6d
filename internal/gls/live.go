package gls

import (
	"bytes"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// liveGoroutines returns the ids of every goroutine alive now.
func liveGoroutines() map[int64]bool {
	buf := stack.All()
	live := make(map[int64]bool)
	for len(buf) > 0 {
		if id := goid.Parse(buf); id != 0 {
			live[id] = true
		}
		i := bytes.Index(buf, []byte("\n\ngoroutine "))
		if i < 0 {
			break
		}
		buf = buf[i+2:]
	}
	return live
}
