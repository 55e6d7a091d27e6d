package report_test

import (
	"fmt"
	"testing"

	"github.com/syncwatch/syncwatch/internal/report"
)

func TestDedupeAndBound(t *testing.T) {
	var s report.Store[string]
	if !s.Add("a", "first", nil) || s.Add("a", "again", nil) || !s.Add("b", "second", nil) {
		t.Fatal("dedupe")
	}
	if got := s.All(); len(got) != 2 || got[0] != "first" || got[1] != "second" {
		t.Fatalf("All = %v", got)
	}
	s.SetMax(3)
	for i := range 10 {
		s.Add(fmt.Sprint(i), "x", nil)
	}
	if len(s.All()) != 3 || s.Dropped() != 9 {
		t.Fatalf("kept %d dropped %d", len(s.All()), s.Dropped())
	}
	s.Reset()
	if len(s.All()) != 0 || s.Dropped() != 0 || !s.Add("a", "after reset", nil) {
		t.Fatal("Reset")
	}
}

func TestNumberCalledForKeptAndDropped(t *testing.T) {
	var s report.Store[int]
	n := 0
	number := func(v *int) { n++; *v = n }
	s.Add("x", 0, number)
	s.Add("x", 0, number)
	s.Add("y", 0, number)
	if got := s.All(); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("numbers %v", got)
	}
}

func TestAddGroupedCountsNewOccurrencesOnce(t *testing.T) {
	type rec struct{ name, n int }
	var s report.Store[rec]
	inc := func(r *rec) { r.n++ }
	if !s.AddGrouped("cycle", "nodes 1,2", rec{name: 1, n: 1}, nil, inc) {
		t.Fatal("first occurrence not kept")
	}
	if s.AddGrouped("cycle", "nodes 3,4", rec{name: 2, n: 1}, nil, inc) {
		t.Fatal("a new occurrence of a kept key was kept apart")
	}
	if s.AddGrouped("cycle", "nodes 1,2", rec{name: 3, n: 1}, nil, inc) {
		t.Fatal("an occurrence seen before was kept")
	}
	all := s.All()
	if len(all) != 1 || all[0] != (rec{name: 1, n: 2}) {
		t.Fatalf("records %+v, want the first one counting two occurrences", all)
	}
	s.Reset()
	if !s.AddGrouped("cycle", "nodes 1,2", rec{name: 4, n: 1}, nil, inc) {
		t.Fatal("Reset did not forget the occurrences")
	}
}

// Seen tells a key added before, kept or past the bound, from a new one,
// until Reset.
func TestSeenKnowsTheKeysAdded(t *testing.T) {
	var s report.Store[int]
	s.SetMax(1)
	if s.Seen("a") {
		t.Fatal("a is seen before it is added")
	}
	s.Add("a", 1, nil)
	s.Add("b", 2, nil) // past the bound: not kept, but seen
	if !s.Seen("a") || !s.Seen("b") || s.Seen("c") {
		t.Fatalf("Seen a, b, c = %v %v %v, want true true false", s.Seen("a"), s.Seen("b"), s.Seen("c"))
	}
	s.Reset()
	if s.Seen("a") {
		t.Fatal("a is seen after Reset")
	}
}
