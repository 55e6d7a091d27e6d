package bench_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/lockorder"
)

// stripes is how many striped locks one object of case (k) has, as a
// storage engine that stripes an index's locks has per object.
const stripes = 16_384

// stripedObject is an object of case (k): a lock of its own, and stripes
// zero-value locks, each first written while the object's lock is held.
type stripedObject struct {
	mu      lockorder.Mutex
	stripes [stripes]lockorder.Mutex
}

// touch takes every stripe of o once, under o's lock: for each stripe, its
// first acquisition, a write made while another lock is held.
func (o *stripedObject) touch() {
	o.mu.Lock()
	for i := range o.stripes {
		o.stripes[i].Lock()
		o.stripes[i].Unlock()
	}
	o.mu.Unlock()
}

// stripedObjects is how many objects one op of case (k) touches.
const stripedObjects = 8

// BenchmarkStriped is case (k) (lockorder only). An op resets lockorder,
// then touches stripedObjects striped objects one after the other,
// keeping them alive, so that the order graph holds the stripes of every
// object touched before. It reports the time per first acquisition of a
// stripe of the first object, with the graph empty (ns/first-lock-empty),
// and of the last, with the graph holding every earlier object's stripes
// (ns/first-lock-full), and their ratio (full/empty): it must not grow
// with the graph. Both come from the same op, so that a slow spell of
// the machine hits both. Run it with -benchtime 1x.
func BenchmarkStriped(b *testing.B) {
	if !instrumented {
		b.Skip("syncwatch_off: lockorder keeps no graph")
	}
	b.Run("impl=check", func(b *testing.B) {
		lockorder.Reset()
		defer lockorder.Reset()
		useMode(b, lockorder.ModeCheck)
		var empty, full time.Duration
		for b.Loop() {
			lockorder.Reset()
			objs := make([]*stripedObject, stripedObjects)
			for i := range objs {
				objs[i] = new(stripedObject)
				start := time.Now()
				objs[i].touch()
				switch i {
				case 0:
					empty += time.Since(start)
				case len(objs) - 1:
					full += time.Since(start)
				}
			}
			runtime.KeepAlive(objs)
		}
		n := float64(b.N * stripes)
		b.ReportMetric(float64(empty.Nanoseconds())/n, "ns/first-lock-empty")
		b.ReportMetric(float64(full.Nanoseconds())/n, "ns/first-lock-full")
		b.ReportMetric(float64(full)/float64(empty), "full/empty")
	})
}
