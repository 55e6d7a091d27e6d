//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A long-lived worker that R21 watches (its a->b held a cycle back) takes
// the slow path at each new epoch (after every Done) only for its chains
// into the lock it is watched for: its other nested acquisitions keep the
// chain cache, as an unwatched worker's do.
func benchWorker(b *testing.B, watch bool) {
	job, stop := setupWorker(b, watch)
	defer stop()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		job()
	}
	b.StopTimer()
}

// setupWorker starts the worker, watched by R21 or not, and returns a job
// (8 nested acquisitions by the worker, then its Done, waited for).
func setupWorker(b testing.TB, watch bool) (job, stop func()) {
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(lockorder.Violation) {}))
	lockorder.Reset()
	a, bb := lockorder.NewMutex("rv21-bw-a"), lockorder.NewMutex("rv21-bw-b")
	c, d := lockorder.NewMutex("rv21-bw-c"), lockorder.NewMutex("rv21-bw-d")
	ms := make([]*lockorder.Mutex, 8)
	for i := range ms {
		ms[i] = lockorder.NewMutex("rv21-bw-m")
	}
	_ = d
	var wg lockorder.WaitGroup
	jobs := make(chan int)
	go func() {
		for j := range jobs {
			if j == 0 {
				lockAB(a, bb)
			} else {
				for _, m := range ms {
					lockAB(c, m)
				}
			}
			wg.Done()
		}
	}()
	wg.Add(1)
	jobs <- 0
	wg.Wait()
	if watch {
		lockAB(bb, a)
	}
	if n := len(only(lockorder.KindCycle)); n != 0 {
		b.Fatalf("%d cycles", n)
	}
	job = func() {
		wg.Add(1)
		jobs <- 1
		wg.Wait()
	}
	return job, func() { close(jobs); lockorder.Reset() }
}

// The same as a test: a job of the watched worker allocates (and takes
// the engine's lock) as the first sighting of each of its chains does,
// every time; the unwatched one takes the fast path. On main both do.
func TestAWatchedWorkerKeepsTheFastPath(t *testing.T) {
	job, stop := setupWorker(t, false)
	unwatched := testing.AllocsPerRun(200, job)
	stop()
	job, stop = setupWorker(t, true)
	defer stop()
	watched := testing.AllocsPerRun(200, job)
	t.Logf("allocs per job: unwatched %.0f, watched %.0f", unwatched, watched)
	if watched > 2*unwatched+4 {
		t.Errorf("a watched worker allocates %.0f per job, an unwatched one %.0f: every nested lock takes the slow path after each Done", watched, unwatched)
	}
}

func BenchmarkWorkerWatched(b *testing.B)   { benchWorker(b, true) }
func BenchmarkWorkerUnwatched(b *testing.B) { benchWorker(b, false) }
