package chain_test

import (
	"sync"
	"testing"

	"github.com/syncwatch/syncwatch/internal/chain"
)

func TestExtendDistinguishesOrder(t *testing.T) {
	ab := chain.Extend(chain.Extend(0, 1), 2)
	ba := chain.Extend(chain.Extend(0, 2), 1)
	if ab == ba {
		t.Fatal("A,B and B,A have the same key")
	}
	seen := map[chain.Key]bool{}
	for a := range uint64(200) {
		for b := range uint64(200) {
			k := chain.Extend(chain.Extend(0, a), b)
			if k == 0 || seen[k] {
				t.Fatalf("collision or zero at %d,%d", a, b)
			}
			seen[k] = true
		}
	}
}

func TestSetAddContainsGrowClear(t *testing.T) {
	var s chain.Set
	if s.Contains(5) {
		t.Fatal("empty set contains 5")
	}
	for i := chain.Key(1); i <= 5000; i++ {
		if !s.Add(i*7919, 1) {
			t.Fatalf("Add(%d) not new", i)
		}
	}
	if s.Add(7919, 1) {
		t.Fatal("second Add reported new")
	}
	for i := chain.Key(1); i <= 5000; i++ {
		if !s.Contains(i * 7919) {
			t.Fatalf("lost %d after growth", i)
		}
	}
	if s.Contains(3) || s.Len() != 5000 {
		t.Fatalf("Len = %d", s.Len())
	}
	s.Clear()
	if s.Contains(7919) || s.Len() != 0 {
		t.Fatal("Clear kept keys")
	}
}

func TestSetBounded(t *testing.T) {
	var s chain.Set
	s.SetMax(100)
	for i := chain.Key(1); i <= 1000; i++ {
		s.Add(i, 1)
	}
	if s.Len() > 100 {
		t.Fatalf("Len = %d, bound 100", s.Len())
	}
	if !s.Contains(1000) {
		t.Fatal("latest key lost")
	}
}

func TestSetConcurrentReaders(t *testing.T) {
	var s chain.Set
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Go(func() {
			for i := chain.Key(1); i <= 2000; i++ {
				s.Add(i*4+chain.Key(r), 1)
				if !s.Contains(i*4 + chain.Key(r)) {
					t.Errorf("own key %d missing right after Add", i)
					return
				}
			}
		})
	}
	wg.Wait()
	if s.Len() != 8000 {
		t.Fatalf("Len = %d, want 8000", s.Len())
	}
}

func BenchmarkContains(b *testing.B) {
	var s chain.Set
	for i := chain.Key(1); i < 100; i++ {
		s.Add(i, 1)
	}
	for b.Loop() {
		s.Contains(42)
	}
}

func TestSetOwners(t *testing.T) {
	var s chain.Set
	if s.Has(5, 7) || s.Contains(5) {
		t.Fatal("empty set has key 5")
	}
	s.Add(5, 7)
	if !s.Has(5, 7) || s.Has(5, 8) || !s.Contains(5) {
		t.Fatal("key 5 is not 7's alone")
	}
	s.Add(5, 7) // the same owner again
	s.Add(5, 8) // another owner
	if !s.Has(5, 7) || !s.Has(5, 8) || s.Has(5, 9) {
		t.Fatal("key 5 is not 7's and 8's alone")
	}
	for o := uint64(9); o < 9+chain.MaxOwners-3; o++ {
		s.Add(5, o)
	}
	if s.Has(5, 1000) {
		t.Fatalf("key 5 is Many's with %d owners", chain.MaxOwners-1)
	}
	s.Add(5, 1000) // the MaxOwners'th
	if !s.Has(5, 1001) {
		t.Fatal("key 5 is not Many's after MaxOwners owners")
	}
	s.Add(6, 1)
	s.Add(6, 2)
	for i := range chain.Key(3000) { // grows the table: owners move with keys
		s.Add(i+10, uint64(i)+1)
	}
	if !s.Has(5, 1002) || !s.Has(6, 1) || !s.Has(6, 2) || s.Has(6, 3) {
		t.Fatal("owners lost in growth")
	}
	if !s.Has(10+2999, 3000) {
		t.Fatal("the owner of a moved key was lost")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Add with owner 0 did not panic")
		}
	}()
	s.Add(1, 0)
}
