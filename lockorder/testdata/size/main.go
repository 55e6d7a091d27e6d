// Command size is a small program whose goroutines share a Mutex, an
// RWMutex and a WaitGroup, built by lockorder's TestBinarySize with sync
// (tag sizesync), with lockorder, and with lockorder under -tags
// syncwatch_off. The locks are named by the aliases of sync.go or
// lockorder.go, so every build runs the same code. Tag sizefmt adds fmt,
// as most programs have it; tag sizeotel adds the OpenTelemetry packages
// the syncwatch_off build cannot do without (otel.go).
package main

import "os"

func main() {
	var (
		mu    Mutex
		rw    RWMutex
		wg    WaitGroup
		total int
		table = map[int]int{}
	)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				mu.Lock()
				total += i
				mu.Unlock()
				rw.Lock()
				table[g] = i
				rw.Unlock()
				rw.RLock()
				_ = table[g]
				rw.RUnlock()
			}
		}()
	}
	wg.Wait()
	report(total)
	if total != 4*4950 {
		os.Exit(1)
	}
}
