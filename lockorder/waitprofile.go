//go:build !syncwatch_off

package lockorder

import (
	"cmp"
	"compress/gzip"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/pprofenc"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// The wait profile: contended lock waits aggregated per lock and waiter
// stack, for WriteWaitProfile.

// maxWaitKeys bounds the wait profile's table. Waits of further (lock,
// stack) pairs are added to a single overflow entry.
const maxWaitKeys = 4096

// otherLock names the overflow entry, as lock and class.
const otherLock = "(other)"

type waitKey struct {
	lock  uint64 // the lock's id
	stack stack.ID
}

type waitStat struct {
	name, class string
	counts      class.WaitCounts // delay in nanoseconds
}

// waitProfState is the wait profile: since when it counts, its entries,
// and the entry of the waits past its bound.
type waitProfState struct {
	mu       sync.Mutex
	since    time.Time
	stats    map[waitKey]*waitStat
	overflow *waitStat
	// gen numbers the profile's generations: each reset starts one, and
	// a lock's cached counters count only in theirs.
	gen atomic.Uint64
}

var waitProf = waitProfState{since: time.Now(), overflow: newOverflow(0)}

func newOverflow(gen uint64) *waitStat {
	o := &waitStat{name: otherLock, class: otherLock}
	o.counts.Gen = gen
	return o
}

// recordWaitProfile adds a wait of l that lasted d to the wait profile,
// with the waiter's stack if long is set. It is called on the waiter's
// goroutine, after the wait.
//
// A short wait, the common case, is added to counters cached on l, so that
// contended waits on different locks, or on one lock from many goroutines,
// do not serialize on the profile's table; only the first short wait of a
// lock in each generation, and long waits, which are keyed by stack too,
// take the table's lock.
func recordWaitProfile(l *class.Lock, d time.Duration, long bool, st stack.ID) {
	if !long {
		if c := l.WaitCounts(); c != nil && c.Gen == waitProf.gen.Load() {
			c.Count.Add(1)
			c.Delay.Add(d.Nanoseconds())
			return
		}
	}
	var k waitKey
	k.lock = l.ID
	if long {
		k.stack = st
	}
	waitProf.mu.Lock()
	s := waitProf.stats[k]
	if s == nil {
		if len(waitProf.stats) >= maxWaitKeys {
			s = waitProf.overflow
		} else {
			// A new Key: the names are formatted once, here.
			if waitProf.stats == nil {
				waitProf.stats = make(map[waitKey]*waitStat)
			}
			s = &waitStat{name: l.Name(), class: l.ClassName()}
			s.counts.Gen = waitProf.gen.Load()
			waitProf.stats[k] = s
		}
	}
	if !long {
		l.SetWaitCounts(&s.counts)
	}
	waitProf.mu.Unlock()
	s.counts.Count.Add(1)
	s.counts.Delay.Add(d.Nanoseconds())
}

// ResetWaitProfile forgets the waits recorded so far, so that the next
// [WriteWaitProfile] covers only what follows. [Reset] does not clear the
// wait profile; tests that read it call ResetWaitProfile first.
func ResetWaitProfile() {
	waitProf.mu.Lock()
	gen := waitProf.gen.Add(1) // every lock's cached counters are now stale
	waitProf.stats = nil
	waitProf.overflow = newOverflow(gen)
	waitProf.since = time.Now()
	waitProf.mu.Unlock()
}

// WriteWaitProfile writes, in the gzipped protocol buffer format read by
// go tool pprof, a profile of the contended lock waits since the program
// started or [ResetWaitProfile] was last called. It is safe to call at any
// time, from any goroutine; it returns w's error, if any.
//
// The waits counted are those of the [MetricWaitDuration] histogram: in
// ModeTrace and ModeCheck, each contended wait that ended with the lock
// acquired. The profile has the sample types of Go's mutex profile,
// contentions/count and delay/nanoseconds (period type contentions/count,
// period 1), and every wait is counted: there is no sampling.
//
// Samples are aggregated per lock and per waiter stack. Each sample's
// innermost frame is a synthetic function "lockorder.wait(NAME)", NAME being
// the lock's name, and each sample has the string labels "lock" (the lock's
// name) and "class" (its class). The waiter's stack, from its call to Lock
// outwards, is captured only for waits that lasted at least the span
// threshold ([WithWaitThreshold]): shorter waits, the common case, are
// aggregated per lock under the synthetic frame alone, so that recording
// them costs two atomic adds and no stack capture.
//
// The profile keeps at most 4096 (lock, stack) pairs; waits of further
// pairs are added to one sample whose lock and class are "(other)".
func WriteWaitProfile(w io.Writer) error {
	waitProf.mu.Lock()
	stats := make([]waitEntry, 0, len(waitProf.stats)+1)
	for k, s := range waitProf.stats {
		stats = append(stats, entryOf(k.stack, s))
	}
	if o := waitProf.overflow; o.counts.Count.Load() > 0 {
		stats = append(stats, entryOf(0, o))
	}
	since := waitProf.since
	waitProf.mu.Unlock()
	return writeGzipped(w, buildWaitProfile(stats, since, time.Now()).Encode())
}

// writeGzipped writes b to w gzipped, as runtime/pprof writes its
// profiles, and returns w's error, if any.
func writeGzipped(w io.Writer, b []byte) error {
	zw := gzip.NewWriter(w)
	if _, err := zw.Write(b); err != nil {
		return err
	}
	return zw.Close()
}

type waitEntry struct {
	stack        stack.ID
	name, class  string
	count, delay int64
}

func entryOf(st stack.ID, s *waitStat) waitEntry {
	return waitEntry{stack: st, name: s.name, class: s.class, count: s.counts.Count.Load(), delay: s.counts.Delay.Load()}
}

// buildWaitProfile turns the entries into a profile. Entries of one lock
// name and stack (two locks that had the same address at different times)
// are merged; samples are sorted by lock name, then stack, so the output
// depends only on what was recorded.
func buildWaitProfile(stats []waitEntry, since, now time.Time) *pprofenc.Profile {
	slices.SortFunc(stats, func(a, b waitEntry) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return cmp.Compare(a.stack, b.stack)
	})
	p := waitProfileBase(since, now)
	for i, e := range stats {
		if i > 0 && e.name == stats[i-1].name && e.stack == stats[i-1].stack {
			last := &p.Samples[len(p.Samples)-1]
			last.Values[0] += e.count
			last.Values[1] += e.delay
			continue
		}
		fs := stack.Frames(e.stack)
		s := pprofenc.Sample{
			Stack:  make([]pprofenc.Frame, 0, 1+len(fs)),
			Values: []int64{e.count, e.delay},
			Labels: []pprofenc.Label{{Key: "class", Value: e.class}, {Key: "lock", Value: e.name}},
		}
		s.Stack = append(s.Stack, pprofenc.Frame{Function: "lockorder.wait(" + e.name + ")"})
		for _, f := range fs {
			s.Stack = append(s.Stack, pprofenc.Frame{Function: f.Function, File: f.File, Line: int64(f.Line)})
		}
		p.Samples = append(p.Samples, s)
	}
	return p
}
