package class

import (
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/kind"
)

// Site is a place in the code where zero-value locks are first used: it
// names them. A lock of an anonymous class that has a site is called
// after it, "store.(*DB).beginTx (db.go:801)#2" for the second lock first
// locked there, and its class name is the site's name, so that the same
// field of many objects has one name in code-level terms.
//
// Sites are made by the caller, one per place (function, file and line),
// so that the instance numbers of one place never repeat; there are as
// many as there are places in the program that lock, a set bounded by the
// program's text.
type Site struct {
	// Func is the function, without its package's import path:
	// "store.(*DB).beginTx".
	Func string
	// File is the base name of the file, and Line the line.
	File string
	Line int

	seq       atomic.Uint64          // locks first used here so far
	formatted atomic.Pointer[string] // name, once formatted
}

// name returns "Func (File:Line)". It is formatted on first use only.
func (s *Site) name() string {
	if p := s.formatted.Load(); p != nil {
		return *p
	}
	n := fmt.Sprintf("%s (%s:%d)", s.Func, s.File, s.Line)
	s.formatted.Store(&n)
	return n
}

// NewAt returns the identity of a new lock in a class of its own, first
// used at site s (nil if unknown); k and addr are as for New.
func NewAt(s *Site, k kind.Kind, addr uintptr) *Lock {
	mustKind(k)
	l := newLock(&Class{ID: newID()}, nil, k, addr)
	if s != nil {
		l.Site = s
		l.seq = s.seq.Add(1)
	}
	return l
}

// instanceName returns s's name with instance number seq.
func (s *Site) instanceName(seq uint64) string {
	return s.name() + "#" + strconv.FormatUint(seq, 10)
}
