package chain_test

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/syncwatch/syncwatch/internal/chain"
)

// Owners added in any order are each found, none else, up to the bound;
// and the table's growth keeps them.
func TestSetOwnersAnyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 200; round++ {
		var s chain.Set
		n := 1 + r.IntN(chain.MaxOwners+3)
		owners := make([]uint64, n)
		for i := range owners {
			owners[i] = 1 + r.Uint64N(1<<40)
		}
		for i, o := range owners {
			s.Add(7, o)
			distinct := map[uint64]bool{}
			for _, p := range owners[:i+1] {
				distinct[p] = true
			}
			many := len(distinct) >= chain.MaxOwners
			for _, p := range owners[:i+1] {
				if !s.Has(7, p) {
					t.Fatalf("round %d: owner %d lost after %d adds", round, p, i+1)
				}
			}
			if got := s.Has(7, 1<<41); got != many {
				t.Fatalf("round %d: %d distinct owners, Many = %v", round, len(distinct), got)
			}
		}
		for k := chain.Key(100); k < 3000; k++ { // grow
			s.Add(k, 1)
		}
		for _, o := range owners {
			if !s.Has(7, o) {
				t.Fatalf("round %d: owner %d lost in growth", round, o)
			}
		}
	}
}

// A reader never finds an owner that was not added, nor misses one that
// was added before it looked (Has is lock-free against addOwner).
func TestSetOwnersConcurrentHas(t *testing.T) {
	var s chain.Set
	var added [chain.MaxOwners + 10]atomic.Bool
	var stop atomic.Bool
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() {
			rr := rand.New(rand.NewPCG(uint64(r), 9))
			for !stop.Load() {
				i := rr.IntN(len(added))
				was := added[i].Load()
				has := s.Has(3, uint64(1000-i))
				if was && !has {
					t.Errorf("owner %d added, Has false", 1000-i)
					return
				}
			}
		})
	}
	perm := rand.Perm(chain.MaxOwners - 1)
	for _, i := range perm {
		s.Add(3, uint64(1000-i))
		added[i].Store(true)
		for k := chain.Key(0); k < 50; k++ {
			s.Add(10000+k+chain.Key(i)*50, 1)
		}
	}
	stop.Store(true)
	wg.Wait()
	if s.Has(3, 1) {
		t.Fatal("Many with MaxOwners-1 owners")
	}
}

// A goroutine with no clock asks for owner 0: no chain is its, however
// many owners hold it (an empty place is not owner 0).
func TestSetNoOwnerZero(t *testing.T) {
	var s chain.Set
	for o := uint64(1); o < 20; o++ {
		s.Add(7, o)
		if s.Has(7, 0) {
			t.Fatalf("owner 0 found with %d owners", o)
		}
	}
}
