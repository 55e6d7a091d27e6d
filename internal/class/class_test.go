package class_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/kind"
)

func TestNamedClassesAreShared(t *testing.T) {
	l1, l2 := class.NewNamed("store", kind.Mutex, 0x10), class.NewNamed("store", kind.Mutex, 0x20)
	a := l1.Class
	if l2.Class != a || !a.Named || a.Name != "store" {
		t.Fatalf("classes %+v and %+v", a, l2.Class)
	}
	if class.NewNamed("replica", kind.Mutex, 0x30).Class == a {
		t.Fatal("different names share a class")
	}
	if l1.ID == l2.ID || l2.Seq() != l1.Seq()+1 {
		t.Fatalf("instances: %+v %+v", l1, l2)
	}
	if l1.Name() != "store#1" || l1.ClassName() != "store" {
		t.Fatalf("names %q %q", l1.Name(), l1.ClassName())
	}
	if l3 := class.New(a, kind.Mutex, 0x40); l3.Class != a || l3.Seq() != l2.Seq()+1 {
		t.Fatalf("New in a live lock's class: %+v", l3)
	}
	runtime.KeepAlive(l1)
}

func TestAnonymousLockHasOwnClass(t *testing.T) {
	l1, l2 := class.New(nil, kind.Mutex, 0xc000), class.New(nil, kind.RWMutex, 0xd000)
	if l1.Class == l2.Class || l1.Class.Named {
		t.Fatal("anonymous locks share a class")
	}
	if l1.Name() != "Mutex@0xc000" || l2.ClassName() != "RWMutex@0xd000" {
		t.Fatalf("names %q %q", l1.Name(), l2.ClassName())
	}
}

func TestLocksNamedAfterTheirSite(t *testing.T) {
	s := &class.Site{Func: "store.(*DB).beginTx", File: "db.go", Line: 801}
	l1, l2 := class.NewAt(s, kind.Mutex, 0xc000), class.NewAt(s, kind.RWMutex, 0xd000)
	if l1.Class == l2.Class || l1.Class.Named {
		t.Fatal("locks of one site share a class")
	}
	if l1.Name() != fmt.Sprintf("store.(*DB).beginTx (db.go:801)#%d", l1.Seq()) || l2.Seq() != l1.Seq()+1 {
		t.Fatalf("names %q %q", l1.Name(), l2.Name())
	}
	if l1.ClassName() != "store.(*DB).beginTx (db.go:801)" || l1.Label().Func() != "store.(*DB).beginTx" {
		t.Fatalf("class %q, func %q", l1.ClassName(), l1.Label().Func())
	}
	if o := class.NewAt(s, kind.Once, 0xe000); o.Name() != fmt.Sprintf("Once store.(*DB).beginTx (db.go:801)#%d", o.Seq()) {
		t.Fatalf("a Once is named %q", o.Name())
	}
	if l := class.NewAt(nil, kind.Mutex, 0xf000); l.Name() != "Mutex@0xf000" || l.ClassName() != l.Name() || l.Label().Func() != "" {
		t.Fatalf("without a site: %q %q", l.Name(), l.ClassName())
	}
}

func TestHolderAndReadGen(t *testing.T) {
	l := class.New(nil, kind.Mutex, 1)
	if l.Holder() != 0 {
		t.Fatal("new lock has a holder")
	}
	l.SetHolder(7)
	if l.Holder() != 7 {
		t.Fatal("holder not recorded")
	}
	l.ClearHolder()
	if l.Holder() != 0 {
		t.Fatal("holder not cleared")
	}
	g := l.ReadGen()
	l.BumpReadGen()
	if l.ReadGen() == g {
		t.Fatal("read generation unchanged")
	}
	if !l.Track() || l.Track() {
		t.Fatal("Track must be true exactly once")
	}
	c := class.NewNamed("written-test", kind.Mutex, 1).Class
	if c.Written() || !c.MarkWritten(false) || c.MarkWritten(true) || !c.Written() {
		t.Fatal("MarkWritten must report the first write once")
	}
	if !c.Settled() || c.Gated() {
		t.Fatal("a write with nothing held leaves no gate")
	}
	gc := class.NewNamed("gated-test", kind.Mutex, 1).Class
	if !gc.MarkWritten(true) || !gc.Written() || !gc.Gated() || gc.Settled() {
		t.Fatal("a first write under a lock makes the class gated, not settled")
	}
	gc.Ungate()
	if gc.Gated() || !gc.Settled() {
		t.Fatal("Ungate must leave the class written, without a gate")
	}
	gc.Unwrite()
	if gc.Written() || gc.Gated() || gc.Settled() || !gc.MarkWritten(true) || !gc.Gated() {
		t.Fatal("after Unwrite the next write is the first again, and may gate the class")
	}
}

// A lock's first write, an initialisation: goroutine 10, whose state is
// the 5th, writes it first when 7 states exist. While it holds, any other
// goroutine shows the lock shared; once released, only a goroutine whose
// state existed at the write (at most the 7th), other than the writer's.
func TestInitialisationWriteWitnesses(t *testing.T) {
	const writer, writerSeq, created = 10, 5, 7
	first := func() *class.Lock {
		l := class.New(nil, kind.RWMutex, 1)
		if l.Plain() || l.Use(true, writer, writerSeq, func() uint64 { return created }) != class.Init || !l.InitHeld() {
			t.Fatal("a first write with nothing held is no initialisation")
		}
		l.SetHolder(writer)
		return l
	}
	l := first()
	if l.Witness(writer, writerSeq) || !l.Witness(11, 0) || !l.Plain() {
		t.Fatal("held: its holder is no witness, another goroutine is")
	}
	l = first()
	l.EndInit()
	if !l.InitDone() {
		t.Fatal("released: the write does not count")
	}
	for _, seq := range []uint64{0, writerSeq, created + 1} {
		if seq != 0 && !l.Quiet(seq) {
			t.Fatalf("state %d: an acquisition that witnesses nothing is Quiet", seq)
		}
		if l.Use(false, 11, seq, nil) != class.Plain || !l.InitDone() {
			t.Fatalf("state %d: no witness (none, the writer's, later)", seq)
		}
	}
	if l.Quiet(created) || l.Use(false, 11, created, nil) != class.Shared || !l.Plain() || !l.Quiet(1) || l.Witness(12, 1) {
		t.Fatal("a state there at the write witnesses, once")
	}
	l = first()
	if !l.CountInit() || !l.Plain() || l.CountInit() {
		t.Fatal("CountInit ends the exemption, once")
	}
	l = class.New(nil, kind.RWMutex, 1)
	if l.Use(false, writer, writerSeq, nil) != class.Plain || !l.Plain() {
		t.Fatal("a first read is no initialisation")
	}
	l = class.New(nil, kind.RWMutex, 1)
	if l.MarkUsed(); !l.Plain() {
		t.Fatal("MarkUsed")
	}
}

// Every lock has a kind, which the rules ask what its holds guarantee: a
// lock of no kind is a programmer error, caught before it is registered.
func TestLockOfNoKindPanics(t *testing.T) {
	assert.PanicsWithValue(t, "class: a lock of no kind (Kind(0))", func() { class.New(nil, 0, 1) })
	assert.PanicsWithValue(t, "class: a lock of no kind (Kind(9))", func() { class.NewAt(nil, 9, 1) })
	assert.Panics(t, func() { class.NewNamed("no-kind", 0, 1) })
	l := class.NewNamed("no-kind", kind.Mutex, 1)
	assert.Equal(t, uint64(1), l.Seq(), "the panic registered nothing")
}
