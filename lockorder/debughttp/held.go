package debughttp

import (
	"bytes"
	"runtime/pprof"
	"strings"

	"github.com/syncwatch/syncwatch/lockorder"
)

// maxHeld bounds the held locks listed.
const maxHeld = 200

// Held is what lockorder's held profile ([lockorder.HeldProfileName])
// lists: the locks held right now, each by the stack where it was taken.
// It is filled only in lockorder's check mode with the profile turned on
// (lockorder.WithHeldProfile, or SYNCWATCH_HELD_PROFILE=1).
type Held struct {
	// Total is the number of locks held, Locks at most 200 of them.
	Total int        `json:"total"`
	Locks []HeldLock `json:"locks,omitempty"`
}

// HeldLock is one entry of [Held]: Count locks taken at Stack (innermost
// frame first, "function file:line").
type HeldLock struct {
	Count int      `json:"count"`
	Stack []string `json:"stack"`
}

// heldLocks reads the held profile in its text form (debug=1).
func heldLocks() Held {
	p := pprof.Lookup(lockorder.HeldProfileName)
	if p == nil || p.Count() == 0 {
		return Held{}
	}
	var buf bytes.Buffer
	if err := p.WriteTo(&buf, 1); err != nil {
		return Held{}
	}
	h := parseHeld(buf.String())
	return h
}

// parseHeld parses a runtime/pprof profile written with debug=1:
//
//	NAME profile: total 2
//	1 @ 0x4f0a45 0x474ac1
//	#	0x4f0a44	main.main+0x64	/src/main.go:12
//	...
func parseHeld(text string) Held {
	var (
		h   Held
		cur *HeldLock
	)
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.Contains(line, " profile: total "):
		case strings.HasPrefix(line, "#\t"):
			if cur == nil {
				continue
			}
			f := strings.Split(line, "\t")
			if len(f) >= 4 {
				fn := f[2]
				if i := strings.LastIndex(fn, "+0x"); i > 0 {
					fn = fn[:i]
				}
				cur.Stack = append(cur.Stack, fn+" "+strings.TrimSpace(f[3]))
			}
		case strings.Contains(line, " @ "):
			var n int
			for _, c := range line[:strings.Index(line, " @ ")] {
				if c < '0' || c > '9' {
					n = -1
					break
				}
				n = 10*n + int(c-'0')
			}
			if n <= 0 {
				cur = nil
				continue
			}
			h.Total += n
			if len(h.Locks) < maxHeld {
				h.Locks = append(h.Locks, HeldLock{Count: n})
				cur = &h.Locks[len(h.Locks)-1]
			} else {
				cur = nil
			}
		}
	}
	return h
}
