package leak_test

import (
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/leak"
	"github.com/syncwatch/syncwatch/internal/stack"
)

func TestMarked(t *testing.T) {
	for _, c := range []struct {
		in, state string
		leaked    bool
	}{
		{"sync.Mutex.Lock (leaked)", "sync.Mutex.Lock", true},
		{"chan receive", "chan receive", false},
		{"select (no cases) (leaked)", "select (no cases)", true},
	} {
		s, ok := leak.Marked(c.in)
		if s != c.state || ok != c.leaked {
			t.Errorf("Marked(%q) = %q, %v; want %q, %v", c.in, s, ok, c.state, c.leaked)
		}
	}
}

// TestDetectMarksAnUnreachableDeadlock blocks two goroutines on each
// other's locks, which nothing else can reach, and checks that a dump
// taken after Detect marks both, and not a goroutine that can still be
// woken.
func TestDetectMarksAnUnreachableDeadlock(t *testing.T) {
	if !leak.Supported() {
		if leak.Detect() {
			t.Fatal("Detect ran where Supported says it cannot")
		}
		t.Skipf("%s: the runtime cannot detect leaked goroutines", runtime.Version())
	}
	id1, id2 := deadlockedPair()
	wake := make(chan struct{})
	defer close(wake)
	awake := make(chan int64, 1)
	go func() { awake <- goid.ID(); <-wake }() // the test can wake it: not leaked
	idw := <-awake
	for !strings.HasPrefix(dumpStates()[idw], "chan receive") {
		runtime.Gosched()
	}
	before := leak.Count()
	if !leak.Detect() {
		t.Fatal("Detect failed where it is supported")
	}
	if leak.Count() != before+1 {
		t.Errorf("Count went from %d to %d", before, leak.Count())
	}
	states := dumpStates()
	for _, id := range []int64{id1, id2} {
		if _, ok := leak.Marked(states[id]); !ok {
			t.Errorf("goroutine %d (%q) not marked leaked", id, states[id])
		}
	}
	if _, ok := leak.Marked(states[idw]); ok {
		t.Errorf("goroutine %d, which the test can wake, marked leaked", idw)
	}
}

// deadlockedPair leaves two goroutines blocked on each other's locks,
// which only they reach once it returns, and returns their ids.
func deadlockedPair() (int64, int64) {
	var a, b sync.Mutex
	ids := make(chan int64, 2)
	both := make(chan struct{})
	for _, pair := range [][2]*sync.Mutex{{&a, &b}, {&b, &a}} {
		go func() {
			pair[0].Lock()
			ids <- goid.ID()
			<-both // both hold their first lock
			pair[1].Lock()
		}()
	}
	id1, id2 := <-ids, <-ids
	close(both)
	for {
		s := dumpStates()
		if strings.HasPrefix(s[id1], "sync.Mutex.Lock") && strings.HasPrefix(s[id2], "sync.Mutex.Lock") {
			return id1, id2
		}
		runtime.Gosched()
	}
}

// dumpStates returns every goroutine's state, by id.
func dumpStates() map[int64]string {
	out := map[int64]string{}
	for _, g := range strings.Split(string(stack.All()), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		i, j := strings.IndexByte(header, '['), strings.LastIndexByte(header, ']')
		if id := goid.Parse([]byte(header)); id != 0 && i >= 0 && j > i {
			out[id] = header[i+1 : j]
		}
	}
	return out
}
