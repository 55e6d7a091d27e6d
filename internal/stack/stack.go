// Package stack captures call stacks, stores each distinct one once, and
// symbolizes them with runtime.CallersFrames so that inlined calls are shown
// correctly. Frames of syncwatch's own machinery are left out, so a stack
// starts at the user's call to Lock, Await or Apply.
package stack

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// MaxDepth is the number of frames kept per stack. Unwinding is most of
// the cost of a capture, so it is kept modest.
const MaxDepth = 20

// ID names an interned stack. The zero ID is "no stack".
type ID uint32

// Frame is one symbolized call site.
type Frame struct {
	Function string
	File     string
	Line     int
}

// String formats f as "function (file:line)".
func (f Frame) String() string { return fmt.Sprintf("%s (%s:%d)", f.Function, f.File, f.Line) }

// internal lists the function-name prefixes of syncwatch's packages. A
// frame whose function starts with one of them (and is not in a _test
// package) is not shown: reports start at the user's call into syncwatch.
var internal = []string{
	"github.com/syncwatch/syncwatch/lockorder.",
	"github.com/syncwatch/syncwatch/internal/",
	"github.com/syncwatch/syncwatch/barrier.",
	"github.com/syncwatch/syncwatch/staleness.",
	"github.com/syncwatch/syncwatch/paramserver.",
	"runtime.",
	"sync.",
	"internal/sync.",
}

// isInternal reports whether fn belongs to syncwatch's machinery or the runtime.
func isInternal(fn string) bool {
	for _, p := range internal {
		if strings.HasPrefix(fn, p) {
			return !strings.HasSuffix(pkgPath(fn), "_test")
		}
	}
	return false
}

// pkgPath returns the import path part of a fully qualified function name.
func pkgPath(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	if dot := strings.IndexByte(fn[slash+1:], '.'); dot >= 0 {
		return fn[:slash+1+dot]
	}
	return fn
}

// Capture records the calling goroutine's stack, skipping syncwatch's own
// frames, and returns its interned id. It allocates only the first time a
// given stack is seen.
func Capture() ID {
	var pcs [MaxDepth + 6]uintptr
	n := runtime.Callers(2, pcs[:])
	return defaultTable.intern(pcs[:n])
}

// CaptureAbove is Capture for a stack that starts skip frames above its
// caller's: the frames of syncwatch's own calls between the user's code
// and the caller are left out, so that two captures of one user's call
// made from different places in syncwatch (one Trace serving two uses,
// or a Capture) intern as one stack (see Trace.Drop).
func CaptureAbove(skip int) ID {
	var pcs [MaxDepth + 6]uintptr
	n := runtime.Callers(2+skip, pcs[:])
	return defaultTable.intern(pcs[:n])
}

// A Trace is the calling goroutine's stack, taken once for several uses in
// one call: its return addresses (lockorder names a new lock after the
// first of them outside syncwatch) and its interned id, made when first
// asked for. Unwinding is most of a capture's cost, so one unwind serves
// both. The zero Trace is not taken.
type Trace struct {
	// Two addresses more than Capture's: a Trace is taken two calls
	// deeper in syncwatch than the Capture it stands for, and the user's
	// frames it keeps must be as many.
	pcs [MaxDepth + 8]uintptr
	n   int
	id  ID
}

// Take records the stack of Take's caller in t.
func (t *Trace) Take() {
	t.n = runtime.Callers(2, t.pcs[:])
	t.id = 0
}

// Drop drops the n innermost frames of t, as CaptureAbove(n) would have,
// before its ID is made.
func (t *Trace) Drop(n int) {
	n = min(n, t.n)
	copy(t.pcs[:], t.pcs[n:t.n])
	t.n -= n
	t.id = 0
}

// Taken reports whether Take recorded a stack in t.
func (t *Trace) Taken() bool { return t.n > 0 }

// PCs returns the return addresses Take recorded, innermost first.
func (t *Trace) PCs() []uintptr { return t.pcs[:t.n] }

// ID returns the interned id of the stack Take recorded, interning it on
// the first call; the zero ID if t is not taken.
func (t *Trace) ID() ID {
	if t.id == 0 && t.n > 0 {
		t.id = defaultTable.intern(t.pcs[:t.n])
	}
	return t.id
}

// Frames returns the symbolized frames of id, outermost syncwatch frames
// removed. It returns nil for the zero ID or an unknown id.
func Frames(id ID) []Frame { return defaultTable.frames(id) }

// Format returns the frames of id, one "function\n\tfile:line" pair per
// frame, each line prefixed with indent.
func Format(id ID, indent string) string {
	var b strings.Builder
	for _, f := range Frames(id) {
		fmt.Fprintf(&b, "%s%s\n%s\t%s:%d\n", indent, f.Function, indent, f.File, f.Line)
	}
	return b.String()
}

// Top returns the first user frame of id, or a zero Frame.
func Top(id ID) Frame {
	if fs := Frames(id); len(fs) > 0 {
		return fs[0]
	}
	return Frame{}
}

// Len returns the number of distinct stacks stored.
func Len() int { return defaultTable.len() }

// table interns stacks by their program counters. Lookups hash the
// counters and compare them, so a stack seen before costs no allocation.
// A stack is symbolized when its frames are first asked for (a report),
// not when it is interned: symbolizing a stack the first time costs tens
// of microseconds, and most stacks interned are never reported.
//
// The index is split into shards by hash, each with its lock, so that
// goroutines interning stacks at once (every new lock's first
// acquisition captures one) seldom wait for each other; the table's own
// lock is taken only to add a stack and to symbolize one. A shard's lock
// may be held while the table's is taken, never the other way.
type table struct {
	shards [numShards]shard
	mu     sync.Mutex
	pcs    [][]uintptr
	stacks []*[]Frame // nil until symbolized
}

// numShards is the number of shards of a table's index.
const (
	shardBits = 5
	numShards = 1 << shardBits
)

// shard is one part of a table's index: the stacks whose hash it holds,
// each with its counters (never written once interned).
type shard struct {
	mu     sync.Mutex
	byHash map[uint64][]interned
	_      [48]byte // a shard per cache line: their locks are written by each lookup
}

type interned struct {
	id  ID
	pcs []uintptr
}

var defaultTable = &table{}

// symbolized counts the stacks symbolized, for tests.
var symbolized atomic.Int64

// maxStacks bounds the table: a program has a bounded number of distinct
// call paths, but a pathological one (deep recursion with varying depth)
// must not grow it without end. Past the bound, new stacks map to overflow.
const maxStacks = 1 << 16

func (t *table) intern(pcs []uintptr) ID {
	h := pcHash(pcs)
	sh := &t.shards[h*0x9e3779b97f4a7c15>>(64-shardBits)] // all of h's bits choose
	sh.mu.Lock()
	id := sh.lookup(h, pcs)
	sh.mu.Unlock()
	if id != 0 {
		return id
	}
	// The table keeps a copy: pcs itself must not escape, so that a
	// capture's array stays on its caller's stack.
	own := slices.Clone(pcs)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if id := sh.lookup(h, pcs); id != 0 {
		return id
	}
	t.mu.Lock()
	if len(t.pcs) >= maxStacks {
		t.mu.Unlock()
		return 0
	}
	t.pcs = append(t.pcs, own)
	t.stacks = append(t.stacks, nil)
	id = ID(len(t.pcs))
	t.mu.Unlock()
	if sh.byHash == nil {
		sh.byHash = make(map[uint64][]interned)
	}
	sh.byHash[h] = append(sh.byHash[h], interned{id, own})
	return id
}

// lookup returns the id of the stack pcs, of hash h, or 0 if sh has none.
// Called with sh.mu held.
func (sh *shard) lookup(h uint64, pcs []uintptr) ID {
	for _, s := range sh.byHash[h] {
		if slices.Equal(s.pcs, pcs) {
			return s.id
		}
	}
	return 0
}

// frames returns the frames of id, symbolizing them on the first call.
// It symbolizes outside the table's lock: it is the slow part, and
// runtime.CallersFrames may keep the slice it is given (an interned
// stack's counters are never written again).
func (t *table) frames(id ID) []Frame {
	t.mu.Lock()
	if id == 0 || int(id) > len(t.pcs) {
		t.mu.Unlock()
		return nil
	}
	if fs := t.stacks[id-1]; fs != nil {
		t.mu.Unlock()
		return *fs
	}
	pcs := t.pcs[id-1]
	t.mu.Unlock()
	symbolized.Add(1)
	fs := symbolize(pcs)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stacks[id-1] == nil {
		t.stacks[id-1] = &fs
	}
	return *t.stacks[id-1]
}

func (t *table) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pcs)
}

// pcHash hashes a pc slice (FNV-1a over the words).
func pcHash(pcs []uintptr) uint64 {
	h := uint64(14695981039346656037)
	for _, pc := range pcs {
		h ^= uint64(pc)
		h *= 1099511628211
	}
	return h
}

// symbolize turns pcs into frames, dropping syncwatch's leading frames and
// runtime frames, and keeping at most MaxDepth.
func symbolize(pcs []uintptr) []Frame {
	frames := runtime.CallersFrames(pcs)
	var out []Frame
	leading := true
	for {
		f, more := frames.Next()
		if f.Function != "" {
			skip := isInternal(f.Function)
			if leading && !skip {
				leading = false
			}
			if !skip && len(out) < MaxDepth {
				out = append(out, Frame{Function: f.Function, File: f.File, Line: f.Line})
			}
		}
		if !more {
			break
		}
	}
	return out
}

// Goroutine returns the current stack of goroutine id as the runtime
// prints it ("goroutine 7 [chan receive]:" and its frames), or "" if there
// is no such goroutine. It stops the world briefly: call it only on slow
// paths such as a timed-out wait.
func Goroutine(id int64) string {
	buf := All()
	head := fmt.Sprintf("goroutine %d [", id)
	s := string(buf)
	i := strings.Index(s, head)
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j]
	}
	return strings.TrimRight(s, "\n")
}

// allSize is the size of the buffer the last All needed: each time All
// finds its buffer too small it stops the world again, so it starts from
// what was enough the last time.
var allSize atomic.Int64

// LastAllSize returns the size of the last dump All took, 0 if none.
func LastAllSize() int { return int(allSize.Load()) }

// All returns the stacks of every goroutine, as runtime.Stack prints them.
// It stops the world, for a time that grows with the number of goroutines.
func All() []byte {
	buf := make([]byte, max(1<<16, allSize.Load()+allSize.Load()/4))
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			allSize.Store(int64(n))
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// Origin returns what the text of one goroutine from runtime.Stack says
// of it beyond its frames: its top function as the runtime prints it,
// machinery included ("sync.runtime_notifyListWait", "main.worker"), and
// the go statement that started it ("created by main.run in goroutine 1",
// as a Frame of main.run at that statement), zero if none is shown.
func Origin(text string) (top string, created Frame) {
	for _, p := range framePairs(text) {
		fn, loc := p[0], strings.TrimSpace(p[1])
		rest, isCreated := strings.CutPrefix(fn, "created by ")
		if !isCreated {
			if top == "" {
				top = funcName(fn)
			}
			continue
		}
		if j := strings.Index(rest, " in goroutine "); j >= 0 {
			rest = rest[:j]
		}
		created = Frame{Function: rest}
		created.File, created.Line = fileLine(loc)
		break
	}
	return top, created
}

// Parent returns the goroutine whose go statement started the goroutine
// whose text from runtime.Stack is text ("created by main.run in
// goroutine 7": 7), or 0 if the text names none.
func Parent(text string) int64 {
	for _, p := range framePairs(text) {
		rest, ok := strings.CutPrefix(p[0], "created by ")
		if !ok {
			continue
		}
		_, id, ok := strings.Cut(rest, " in goroutine ")
		if !ok {
			return 0
		}
		n, err := strconv.ParseInt(strings.TrimSpace(id), 10, 64)
		if err != nil {
			return 0
		}
		return n
	}
	return 0
}

// funcName cuts the arguments off a frame's function line.
func funcName(line string) string {
	if p := strings.LastIndexByte(line, '('); p > 0 {
		return line[:p]
	}
	return line
}

// fileLine parses a frame's location line, "/src/x.go:42 +0x1d".
func fileLine(loc string) (string, int) {
	if sp := strings.LastIndexByte(loc, ' '); sp > 0 {
		loc = loc[:sp]
	}
	file, line := loc, 0
	if c := strings.LastIndexByte(loc, ':'); c > 0 {
		file = loc[:c]
		fmt.Sscan(loc[c+1:], &line)
	}
	return file, line
}

// ParseGoroutine turns the text of one goroutine from runtime.Stack into
// frames, leaving out syncwatch's machinery and the runtime, as Frames does.
// The header line is returned separately.
func ParseGoroutine(text string) (header string, frames []Frame) {
	lines := strings.Split(text, "\n")
	if len(lines) == 0 {
		return "", nil
	}
	header = lines[0]
	for _, p := range framePairs(text) {
		fn := strings.TrimPrefix(funcName(p[0]), "created by ")
		file, line := fileLine(strings.TrimSpace(p[1]))
		if isInternal(fn) || strings.HasPrefix(p[0], "created by ") {
			continue
		}
		frames = append(frames, Frame{Function: fn, File: file, Line: line})
	}
	return header, frames
}

// framePairs returns the frames of one goroutine's text, past its header,
// each as its function line and its location line. The line a deep stack
// has between its innermost and outermost frames ("...12 frames
// elided...") is skipped, so that the frames past it pair up.
func framePairs(text string) [][2]string {
	var out [][2]string
	lines := strings.Split(text, "\n")
	for i := 1; i+1 < len(lines); {
		if strings.HasPrefix(lines[i], "...") {
			i++
			continue
		}
		out = append(out, [2]string{lines[i], lines[i+1]})
		i += 2
	}
	return out
}
